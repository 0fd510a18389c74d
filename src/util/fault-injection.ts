import { existsSync, writeFileSync } from "node:fs";
import { z } from "zod";

/**
 * A test-only switch (ORKA_FAULT_INJECTION) that kills the worker or the server with SIGKILL at journal
 * step N of one Task, once (a marker file remembers it happened): `worker` and `server` just before the
 * step is written, `server-uncommitted` just after the server wrote it, in the same turn, so before its
 * commit. Unset in production: then this module does nothing.
 */
const faultSchema = z.object({
  where: z.enum(["worker", "server", "server-uncommitted"]),
  /** Task name, and the step to die before, per Task. */
  steps: z.record(z.string(), z.number().int().positive()),
  /** Directory for the once-only markers. */
  markerDir: z.string().min(1),
});

type Fault = z.infer<typeof faultSchema>;
let parsed: Fault | null | undefined;

function fault(): Fault | null {
  if (parsed === undefined) {
    const text = process.env.ORKA_FAULT_INJECTION;
    parsed = text ? faultSchema.parse(JSON.parse(text)) : null;
  }
  return parsed;
}

export function killAtJournalStep(where: Fault["where"], task: string, seq: number): void {
  const config = fault();
  if (!config || config.where !== where || config.steps[task] !== seq) return;
  const marker = `${config.markerDir}/${where}-${task}-${seq}`;
  if (existsSync(marker)) return;
  writeFileSync(marker, "");
  process.kill(process.pid, "SIGKILL");
}
