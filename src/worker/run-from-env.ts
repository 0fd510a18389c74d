import { readWorkerEnv } from "../runner/attempt-config.ts";
import { runAttempt } from "./attempt.ts";
import type { AttemptIO, AttemptOutcome } from "./attempt-io.ts";
import { runCompatAttempt } from "./compat-attempt.ts";
import { httpTransport } from "./transport.ts";

/**
 * Runs what the worker's `ORKA_*` environment assigns it: a Task's attempt, or a compat request's tool
 * loop. Without a transport of its own, the worker reaches the control plane over HTTP at its URL.
 */
export function runFromEnv(env: Record<string, string | undefined>, io: Omit<AttemptIO, "transport"> & Partial<AttemptIO>): Promise<AttemptOutcome> {
  const assigned = readWorkerEnv(env);
  const withTransport = { ...io, transport: io.transport ?? httpTransport(assigned.config.controllerURL) };
  return assigned.kind === "compat" ? runCompatAttempt(assigned.config, withTransport) : runAttempt(assigned.config, withTransport);
}
