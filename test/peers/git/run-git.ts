// Running the real git CLI with a bounded time, for the git peer and for the tests that act as its clients.
import { execFile } from "node:child_process";
import { OrkaError } from "../../../src/util/errors.ts";

export interface GitRun {
  code: number;
  stdout: string;
  stderr: string;
}

export interface GitRunOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  input?: string;
  timeoutMs?: number;
}

/** A commit identity so `git commit` works without any user configuration. */
const IDENTITY = {
  GIT_AUTHOR_NAME: "Orka Test",
  GIT_AUTHOR_EMAIL: "test@orka.invalid",
  GIT_COMMITTER_NAME: "Orka Test",
  GIT_COMMITTER_EMAIL: "test@orka.invalid",
};

/**
 * An environment that reads no system or user configuration, so what git does depends only on the
 * command and the repository (the machine's ~/.gitconfig cannot change a test).
 */
export function isolatedGitEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH, HOME: "/nonexistent", GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null", GIT_TERMINAL_PROMPT: "0", LANG: "C", ...extra };
}

/** Runs git and reports how it ended; a failure is an answer here, not an exception. */
export function runGit(args: string[], options: GitRunOptions = {}): Promise<GitRun> {
  return new Promise((resolve) => {
    const child = execFile(
      "git",
      args,
      { cwd: options.cwd, env: { ...IDENTITY, ...(options.env ?? process.env) }, timeout: options.timeoutMs ?? 15_000, maxBuffer: 16 * 1024 * 1024, killSignal: "SIGKILL" },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === "number" ? error.code : -1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
    // git may exit without reading its input (most commands never do): that is not a failure.
    child.stdin?.on("error", () => undefined);
    child.stdin?.end(options.input ?? "");
  });
}

/** Runs git and returns its output as it printed it (a diff keeps its last newline); a failure throws with git's own words. */
export async function gitOutput(args: string[], options: GitRunOptions = {}): Promise<string> {
  const run = await runGit(args, options);
  if (run.code !== 0) {
    throw new OrkaError("failed_precondition", `git ${args.join(" ")} exited with ${run.code}: ${run.stderr.trim()}`);
  }
  return run.stdout;
}

/** Runs git and returns its trimmed output; a failure throws with git's own words. */
export async function git(args: string[], options: GitRunOptions = {}): Promise<string> {
  return (await gitOutput(args, options)).trim();
}
