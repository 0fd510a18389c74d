import { z } from "zod";
import type { Attempt } from "../../store/data-store.ts";
import { STEP_KINDS, stepOwnerOf } from "../../store/journal-store.ts";
import { killAtJournalStep } from "../../util/fault-injection.ts";
import type { ApiContext } from "../context.ts";
import { eventBatchSchema } from "./execution-events.ts";

/** A worker writes the step it is about to act on, after any it held until then (a model answer whose tool calls had not run). */
const MAX_STEPS_PER_WRITE = 8;

const stepSchema = z.strictObject({
  run: z.number().int().positive(),
  seq: z.number().int().positive(),
  kind: z.enum(STEP_KINDS),
  messages: z.array(z.record(z.string(), z.unknown())).max(10_000),
  detail: z.record(z.string(), z.unknown()).default({}),
});

/** Steps in order, with the execution events emitted since the worker's last call, carried along to save a round trip. */
export const journalWriteSchema = z.strictObject({
  steps: z.array(stepSchema).min(1).max(MAX_STEPS_PER_WRITE),
  events: eventBatchSchema.default([]),
});

export type JournalWrite = z.infer<typeof journalWriteSchema>;

/**
 * Writes the steps and the events that came with them in one commit (a step already written as sent
 * changes nothing); with `result`, the Task's result too, and `inSameCommit` runs in that commit after them.
 */
export function writeSteps(ctx: ApiContext, attempt: Attempt, { steps, events }: JournalWrite, also: { result?: string; inSameCommit?: () => void } = {}): { storedBytes: number } {
  for (const step of steps) killAtJournalStep("server", attempt.task, step.seq);
  const owner = stepOwnerOf(attempt);
  const { written } = ctx.data.appendEventsWith(attempt.namespace, attempt.task, events, () => {
    const storedBytes = steps.reduce((stored, step) => stored + ctx.journal.append(owner, step).storedBytes, 0);
    if (also.result !== undefined) ctx.data.putResult(attempt.namespace, attempt.task, also.result);
    also.inSameCommit?.();
    return { storedBytes };
  });
  for (const step of steps) killAtJournalStep("server-uncommitted", attempt.task, step.seq);
  return written;
}
