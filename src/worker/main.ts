#!/usr/bin/env node
// Worker entry point for one attempt in its own process (a Kubernetes Job runs this).
import { readAttemptEnv } from "../runner/attempt-config.ts";
import { runAttempt } from "./attempt.ts";

const controller = new AbortController();
process.on("SIGTERM", () => controller.abort(new Error("terminated")));
const outcome = await runAttempt(readAttemptEnv(process.env), {
  log: (text) => process.stdout.write(text),
  signal: controller.signal,
});
if (outcome.reason) process.stderr.write(`${outcome.reason}\n`);
process.exit(outcome.exitCode);
