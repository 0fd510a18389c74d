import { spawn } from "node:child_process";
import { redact, redactValues } from "../policy/redact.ts";
import { OrkaError } from "../util/errors.ts";

/** How Orka runs git: which hosts a workspace may name, and the one config file the operator may add. */
export interface GitSettings {
  /** Hosts a workspace repository may be on (`ORKA_GIT_HOSTS`). */
  allowedHosts: readonly string[];
  /** A git config file read as the global one (`ORKA_GIT_CONFIG`): `url.<x>.insteadOf`, proxies, CA bundles. */
  configFile?: string;
  /** How long one git command may take. */
  timeoutMs: number;
}

export const DEFAULT_GIT_SETTINGS: GitSettings = { allowedHosts: ["github.com"], timeoutMs: 300_000 };

/** The repository Orka keeps for a workspace: its git directory lives outside the files the model can change. */
export interface GitDirs {
  workTree: string;
  gitDir: string;
}

export interface GitCall {
  /** The repository to act on; commands that talk only to a remote need none. */
  dirs?: GitDirs;
  /** A token for the remote, sent as an HTTP header from this process's environment only. */
  credential?: string;
  input?: string;
  maxOutputBytes?: number;
}

export interface GitRun {
  code: number;
  stdout: string;
  stderr: string;
}

const DEFAULT_MAX_OUTPUT_BYTES = 64 * 1024 * 1024;
const MAX_STDERR_BYTES = 64 * 1024;
const ORKA_IDENTITY = { name: "Orka", email: "orka@orka.invalid" };

/**
 * Settings that beat any repository config (environment config outranks `.git/config`): no hooks,
 * no fsmonitor, no redirects that would carry the header elsewhere, no local or ext transports.
 */
const FIXED_CONFIG: [string, string][] = [
  ["core.hooksPath", "/dev/null"],
  ["core.fsmonitor", "false"],
  ["safe.directory", "*"],
  ["http.followRedirects", "false"],
  ["protocol.file.allow", "never"],
  ["protocol.ext.allow", "never"],
  ["credential.helper", ""],
];

/** The environment of one git process: no system or user config but the operator's file, no prompts, the credential as a header. */
function gitEnv(settings: GitSettings, call: GitCall): NodeJS.ProcessEnv {
  const config = [...FIXED_CONFIG];
  if (call.credential) config.push(["http.extraHeader", `Authorization: Basic ${Buffer.from(`x-access-token:${call.credential}`).toString("base64")}`]);
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: "/nonexistent",
    LANG: "C",
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_CONFIG_GLOBAL: settings.configFile ?? "/dev/null",
    GIT_TERMINAL_PROMPT: "0",
    GIT_ASKPASS: "/bin/false",
    GIT_AUTHOR_NAME: ORKA_IDENTITY.name,
    GIT_AUTHOR_EMAIL: ORKA_IDENTITY.email,
    GIT_COMMITTER_NAME: ORKA_IDENTITY.name,
    GIT_COMMITTER_EMAIL: ORKA_IDENTITY.email,
    GIT_CONFIG_COUNT: String(config.length),
  };
  config.forEach(([key, value], i) => {
    env[`GIT_CONFIG_KEY_${i}`] = key;
    env[`GIT_CONFIG_VALUE_${i}`] = value;
  });
  if (call.dirs) {
    env.GIT_DIR = call.dirs.gitDir;
    env.GIT_WORK_TREE = call.dirs.workTree;
  }
  return env;
}

/**
 * Runs git with a deadline and capped output, and reports how it ended (a failure is an answer).
 * What it printed has the credential removed: it can be shown and logged.
 */
export function runGit(settings: GitSettings, args: string[], call: GitCall = {}): Promise<GitRun> {
  const maxBytes = call.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES;
  return new Promise((resolve) => {
    const child = spawn("git", args, { env: gitEnv(settings, call), cwd: call.dirs?.workTree ?? "/", stdio: ["pipe", "pipe", "pipe"], detached: true });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let outBytes = 0;
    let errBytes = 0;
    let problem: string | undefined;
    const stop = (why: string) => {
      problem ??= why;
      try {
        process.kill(-child.pid!, "SIGKILL");
      } catch {
        // It has gone already.
      }
    };
    const timer = setTimeout(() => stop(`git ${args[0]} took longer than ${settings.timeoutMs} ms`), settings.timeoutMs);
    child.stdout.on("data", (chunk: Buffer) => {
      outBytes += chunk.length;
      if (outBytes > maxBytes) return stop(`git ${args[0]} printed more than ${maxBytes} bytes`);
      out.push(chunk);
    });
    // git says what went wrong last: a long stderr keeps its end.
    let errTrimmed = false;
    child.stderr.on("data", (chunk: Buffer) => {
      err.push(chunk);
      errBytes += chunk.length;
      while (errBytes > MAX_STDERR_BYTES && err.length > 1) {
        errBytes -= err.shift()!.length;
        errTrimmed = true;
      }
    });
    child.stdin.on("error", () => undefined);
    child.stdin.end(call.input ?? "");
    let finished = false;
    const finish = (code: number) => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      const known = call.credential ? [call.credential] : [];
      const kept = Buffer.concat(err).toString("utf8");
      // A trimmed stderr starts mid-line: that line goes, so no fragment of anything survives the cut.
      const stderr = redact(errTrimmed ? kept.slice(kept.indexOf("\n") + 1) : kept, known);
      // stdout is data (a diff, a ref list): only the known value goes, so a diff still applies.
      const stdout = redactValues(Buffer.concat(out).toString("utf8"), known);
      resolve({ code: problem ? -1 : code, stdout, stderr: problem ? `${problem}\n${stderr}` : stderr });
    };
    child.on("error", (error) => {
      problem ??= `git could not be started: ${error.message}`;
      finish(-1);
    });
    child.on("close", (code) => finish(code ?? -1));
  });
}

/** Runs git and returns its output; a failure throws with git's own (credential-free) words. */
export async function gitOutput(settings: GitSettings, args: string[], call: GitCall = {}): Promise<string> {
  const run = await runGit(settings, args, call);
  if (run.code !== 0) throw new OrkaError("failed_precondition", `git ${args[0]} failed: ${lastLines(run.stderr)}`);
  return run.stdout;
}

/** The end of git's stderr, where it says what went wrong. */
export function lastLines(stderr: string, count = 4): string {
  return stderr.trim().split("\n").slice(-count).join(" | ") || "no output";
}

/** Whether git's words say the remote refused or wanted the credential. */
export function credentialRefused(stderr: string): boolean {
  return /\b(401|403)\b|Authentication failed|could not read Username|Permission to .* denied|terminal prompts disabled/i.test(stderr);
}
