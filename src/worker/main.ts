#!/usr/bin/env node
// Worker entry point for one attempt in its own process (a Kubernetes Job runs this).
import { OrkaError } from "../util/errors.ts";
import { runFromEnv } from "./run-from-env.ts";

const controller = new AbortController();
process.on("SIGTERM", () => controller.abort(new OrkaError("unavailable", "the worker was terminated")));
const outcome = await runFromEnv(process.env, {
  log: (text) => process.stdout.write(text),
  signal: controller.signal,
});
if (outcome.reason) process.stderr.write(`${outcome.reason}\n`);
process.exit(outcome.exitCode);
