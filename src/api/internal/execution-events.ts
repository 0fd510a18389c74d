import { z } from "zod";
import { EVENT_LIMITS } from "../../store/data-store.ts";

/** An execution event as a worker reports it. */
export const eventSchema = z.strictObject({
  type: z.string().min(1).max(EVENT_LIMITS.type),
  severity: z.enum(["info", "warning", "error"]).optional(),
  toolName: z.string().max(EVENT_LIMITS.toolName).optional(),
  toolCallID: z.string().max(EVENT_LIMITS.toolCallID).optional(),
  summary: z.string().max(EVENT_LIMITS.summary),
  content: z.string().max(EVENT_LIMITS.content).optional(),
  journalRun: z.number().int().positive().optional(),
  journalStep: z.number().int().positive().optional(),
});

export const eventBatchSchema = z.array(eventSchema).max(500, "at most 500 events per call");
