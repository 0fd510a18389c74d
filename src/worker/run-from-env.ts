import { readWorkerEnv } from "../runner/attempt-config.ts";
import { makeAttemptDirs } from "../runner/attempt-dirs.ts";
import { runAttempt } from "./attempt.ts";
import type { AttemptIO, AttemptOutcome } from "./attempt-io.ts";
import { runCompatAttempt } from "./compat-attempt.ts";
import { httpTransport } from "./transport.ts";

/**
 * Runs what the worker's `ORKA_*` environment assigns it: a Task's attempt, or a compat request's tool
 * loop, in the directories the runner named (made here, off the control plane's thread; those the runner
 * made already are kept). A Task's ai attempt has them made before its first built-in tool runs, so a
 * loop that calls none (custom Tools run on the control plane) costs no file-system work; a coding
 * session, a container and a compat request's loop (which asked for Orka's tools) work in them from the start.
 * Without a transport of its own, the worker reaches the control plane over HTTP at its URL.
 */
export async function runFromEnv(env: Record<string, string | undefined>, io: Omit<AttemptIO, "transport"> & Partial<AttemptIO>): Promise<AttemptOutcome> {
  const assigned = readWorkerEnv(env);
  if (assigned.kind === "compat" || assigned.config.task.type !== "ai") makeAttemptDirs(assigned.config);
  const withTransport = { ...io, transport: io.transport ?? httpTransport(assigned.config.controllerURL) };
  return assigned.kind === "compat" ? runCompatAttempt(assigned.config, withTransport) : runAttempt(assigned.config, withTransport);
}
