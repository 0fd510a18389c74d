import { readWorkerEnv } from "../runner/attempt-config.ts";
import { runAttempt } from "./attempt.ts";
import type { AttemptIO, AttemptOutcome } from "./attempt-io.ts";
import { runCompatAttempt } from "./compat-attempt.ts";

/** Runs what the worker's `ORKA_*` environment assigns it: a Task's attempt, or a compat request's tool loop. */
export function runFromEnv(env: Record<string, string | undefined>, io: AttemptIO): Promise<AttemptOutcome> {
  const assigned = readWorkerEnv(env);
  return assigned.kind === "compat" ? runCompatAttempt(assigned.config, io) : runAttempt(assigned.config, io);
}
