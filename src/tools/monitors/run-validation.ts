import { cp, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ValidationPlan } from "../../github/validation.ts";
import { redact } from "../../policy/redact.ts";
import { DEFAULT_LIMITS, exitCodeOf, runSandboxed, type SandboxLimits } from "../../sandbox/bwrap.ts";
import { handToSandboxUser } from "../../sandbox/ownership.ts";
import { formatDuration } from "../../util/duration.ts";
import { errorMessage, OrkaError } from "../../util/errors.ts";
import { CODE_ENV } from "../core/code-exec.ts";
import { defineTool } from "../define.ts";
import { githubToolPath } from "../github/github-tool.ts";
import { GITHUB_ALIASES } from "../github/schemas.ts";
import { runValidationArgs } from "./validation-args.ts";

/** How much of each command's output (stdout and stderr as they came) the model gets: the end, where failures are reported. */
export const OUTPUT_TAIL_BYTES = 16 * 1024;

/** The server half reads the pull request and checks its head out: GitHub's read, then a clone bounded by Orka's git time limit. */
const PREPARE_TIMEOUT_MS = 10 * 60_000;

type ValidationStatus = "passed" | "failed" | "timeout" | "error";

interface CommandResult {
  command: string;
  /** The command's exit code (128 + the signal for a killed one), or -1 when the time limit stopped it. */
  exit_code: number;
  duration_ms: number;
  output_tail: string;
}

interface ValidationResult {
  status: ValidationStatus;
  head_sha: string;
  results: CommandResult[];
  /** Why the commands could not run, with status `error`. */
  error?: string;
}

/**
 * run_validation: the PR monitor's own validation commands over a pull request's exact head. The control
 * plane checks the command choice, reads the head and checks it out (the read credential never leaves it);
 * this half copies that checkout into a fresh private directory and runs the commands there, in their
 * configured order, each with `sh -c` in the sandbox: no network, no credentials or Orka tokens in its
 * environment, one time limit for the whole run, the last 16 KiB of each command's output kept.
 */
export const runValidation = defineTool({
  name: "run_validation",
  family: "monitors",
  readOnly: true,
  description:
    "Run this PR monitor's configured validation commands (tests, linters, builds) on a pull request's exact head, in a sandbox without network or credentials, " +
    "over a fresh copy of the head. Returns status passed, failed, timeout or error, the head SHA, and per command its exit code, duration and the end of its output. " +
    "Only commands configured on the monitor can run; commands picks some of them.",
  parameters: runValidationArgs,
  aliases: GITHUB_ALIASES,
  async run(args, ctx) {
    const plan = (await ctx.controlPlane.post(githubToolPath(ctx, "run_validation"), args, { timeoutMs: PREPARE_TIMEOUT_MS, signal: ctx.signal })) as ValidationPlan;
    return runPlan(plan, ctx.signal);
  },
});

/**
 * Runs the plan's commands one after another over one private copy of the checkout, so a build step's
 * output is there for the test step; the checkout itself is never written, and the next call starts from
 * a new copy.
 */
async function runPlan(plan: ValidationPlan, signal: AbortSignal): Promise<ValidationResult> {
  const results: CommandResult[] = [];
  const answer = (status: ValidationStatus, error?: string): ValidationResult => ({ status, head_sha: plan.head_sha, results, ...(error ? { error } : {}) });
  const timeLimit = new AbortController();
  const timer = setTimeout(() => timeLimit.abort(), plan.timeout_ms);
  const run = AbortSignal.any([timeLimit.signal, signal]);
  let dir: string | undefined;
  try {
    dir = await mkdtemp(join(tmpdir(), "orka-validation-"));
    const tree = join(dir, "tree");
    await cp(plan.checkout, tree, { recursive: true, verbatimSymlinks: true });
    await handToSandboxUser(dir);
    const limits: SandboxLimits = { ...DEFAULT_LIMITS, cpuSeconds: Math.ceil(plan.timeout_ms / 1000) };
    for (const command of plan.commands) {
      results.push(await runCommand(command, tree, limits, run, () => (timeLimit.signal.aborted ? `the time limit of ${formatDuration(plan.timeout_ms)} was reached` : undefined)));
      if (signal.aborted) throw new OrkaError("unavailable", "run_validation was stopped: the Task is ending");
      if (timeLimit.signal.aborted) return answer("timeout");
    }
    return answer(results.every((result) => result.exit_code === 0) ? "passed" : "failed");
  } catch (err) {
    if (signal.aborted) throw err;
    return answer("error", `the commands could not run: ${errorMessage(err)}`);
  } finally {
    clearTimeout(timer);
    // A command may leave files even root cannot remove at once (a busy mount); the directory is private and temporary.
    if (dir) await rm(dir, { recursive: true, force: true }).catch(() => undefined);
  }
}

/** One command in the sandbox; `killedBecause` says why the run's signal ended it, when it did. */
async function runCommand(command: string, tree: string, limits: SandboxLimits, signal: AbortSignal, killedBecause: () => string | undefined): Promise<CommandResult> {
  const tail = new OutputTail(OUTPUT_TAIL_BYTES);
  const started = performance.now();
  const run = await runSandboxed({
    command: ["sh", "-c", command],
    workDir: tree,
    env: CODE_ENV,
    network: false,
    limits,
    // Only the end is kept, by the tail below.
    maxOutputBytes: 0,
    signal,
    onOutput: (chunk) => tail.append(chunk),
  });
  const why = run.aborted ? killedBecause() : undefined;
  return {
    command,
    exit_code: why ? -1 : exitCodeOf(run),
    duration_ms: Math.round(performance.now() - started),
    output_tail: redact(tail.text() + (why ? `\n[killed: ${why}]` : "")),
  };
}

/** The last `limit` bytes of a stream, holding at most twice that while it runs. */
class OutputTail {
  private readonly limit: number;
  private kept = Buffer.alloc(0);
  private dropped = 0;

  constructor(limit: number) {
    this.limit = limit;
  }

  append(chunk: string): void {
    this.kept = Buffer.concat([this.kept, Buffer.from(chunk, "utf8")]);
    if (this.kept.length > 2 * this.limit) this.drop(this.kept.length - this.limit);
  }

  /**
   * The tail, starting at a line when one begins in it: a value cut in half (a token) would no longer look
   * like itself to the redaction, so the partial first line goes.
   */
  text(): string {
    if (this.kept.length > this.limit) this.drop(this.kept.length - this.limit);
    if (this.dropped === 0) return this.kept.toString("utf8");
    const newline = this.kept.indexOf(0x0a);
    if (newline >= 0) this.drop(newline + 1);
    else while (this.kept.length > 0 && (this.kept[0] & 0xc0) === 0x80) this.drop(1);
    return `[output cut: the first ${this.dropped} bytes are left out]\n${this.kept.toString("utf8")}`;
  }

  private drop(bytes: number): void {
    this.kept = Buffer.from(this.kept.subarray(bytes));
    this.dropped += bytes;
  }
}

export const MONITOR_TOOL_DECLARATIONS = [runValidation];
