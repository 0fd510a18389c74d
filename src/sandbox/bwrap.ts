import { spawn } from "node:child_process";
import { existsSync, lstatSync, readlinkSync } from "node:fs";
import { delimiter, join } from "node:path";
import { BoundedText } from "../util/bounded-text.ts";
import type { Readable, Writable } from "node:stream";
import { OrkaError } from "../util/errors.ts";

export interface SandboxLimits {
  cpuSeconds: number;
  memoryBytes: number;
  processes: number;
  fileSizeBytes: number;
  openFiles: number;
}

export const DEFAULT_LIMITS: SandboxLimits = {
  cpuSeconds: 600,
  memoryBytes: 2 * 1024 ** 3,
  processes: 256,
  fileSizeBytes: 256 * 1024 ** 2,
  openFiles: 1024,
};

export interface SandboxRequest {
  command: string[];
  /** Host directory mounted read-write at /workspace, the working directory. */
  workDir: string;
  /** More host paths mounted at the given sandbox paths (read-write unless readOnly). */
  extraBinds?: { host: string; sandbox: string; readOnly?: boolean }[];
  /** Host directory mounted at /tmp; without one, /tmp is a private tmpfs. */
  tmpDir?: string;
  env: Record<string, string>;
  network: boolean;
  limits: SandboxLimits;
  /** Output kept per stream; the rest is dropped and marked. */
  maxOutputBytes: number;
  signal: AbortSignal;
  onOutput?: (chunk: string) => void;
}

export interface SandboxResult {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  stdoutTruncated: boolean;
  stderrTruncated: boolean;
  aborted: boolean;
}

const SIGNAL_NUMBERS: Partial<Record<NodeJS.Signals, number>> = { SIGKILL: 9, SIGTERM: 15, SIGSEGV: 11, SIGXCPU: 24, SIGXFSZ: 25, SIGABRT: 6 };

/** The exit code, or 128 + the signal number for a process killed by a signal (the shell convention). */
export function exitCodeOf(result: Pick<SandboxResult, "exitCode" | "signal">): number {
  return result.exitCode ?? 128 + ((result.signal && SIGNAL_NUMBERS[result.signal]) || 0);
}

/** Uid/gid the sandboxed process runs as when Orka itself runs as root (nobody). */
export const SANDBOX_UID = 65534;

/** The sandbox cannot run here (no bubblewrap): the attempt or tool call fails with this reason instead of running unconfined. */
export class SandboxUnavailableError extends OrkaError {
  constructor(message: string) {
    super("unavailable", message);
  }
}

/** Finds bubblewrap on PATH; the sandbox never falls back to running commands unconfined. */
export function findBwrap(): string | undefined {
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    const candidate = join(dir, "bwrap");
    if (dir && existsSync(candidate)) return candidate;
  }
  return undefined;
}

/** Read-only system directories; nothing of the host's data (Orka's data dir, homes) is visible. */
function systemMounts(): string[] {
  const args = ["--ro-bind", "/usr", "/usr"];
  for (const dir of ["/bin", "/sbin", "/lib", "/lib32", "/lib64", "/etc"]) {
    if (!existsSync(dir)) continue;
    const stat = lstatSync(dir);
    if (stat.isSymbolicLink()) args.push("--symlink", readlinkSync(dir), dir);
    else args.push("--ro-bind", dir, dir);
  }
  return args;
}

export function bwrapArguments(request: SandboxSpawnRequest): string[] {
  const { limits } = request;
  const env = Object.entries({ PATH: "/usr/local/bin:/usr/bin:/bin", HOME: "/workspace", TMPDIR: "/tmp", ...request.env }).flatMap(
    ([name, value]) => ["--setenv", name, value],
  );
  return [
    ...systemMounts(),
    "--proc", "/proc",
    "--dev", "/dev",
    ...(request.tmpDir ? ["--bind", request.tmpDir, "/tmp"] : ["--tmpfs", "/tmp"]),
    "--bind", request.workDir, "/workspace",
    ...(request.extraBinds ?? []).flatMap((b) => [b.readOnly ? "--ro-bind" : "--bind", b.host, b.sandbox]),
    "--chdir", "/workspace",
    "--unshare-all",
    "--unshare-user",
    "--disable-userns",
    "--cap-drop", "ALL",
    ...(request.network ? ["--share-net"] : []),
    "--die-with-parent",
    "--new-session",
    "--clearenv",
    ...env,
    "--",
    "prlimit",
    `--cpu=${limits.cpuSeconds}`,
    `--as=${limits.memoryBytes}`,
    `--nproc=${limits.processes}`,
    `--fsize=${limits.fileSizeBytes}`,
    `--nofile=${limits.openFiles}`,
    "--core=0",
    "--",
    ...request.command,
  ];
}

/** A sandboxed process with its stdin, stdout and stderr piped to Orka; `kill` ends every process in its sandbox. */
export interface SandboxedProcess {
  pid: number | undefined;
  stdin: Writable;
  stdout: Readable;
  stderr: Readable;
  /** Settles when the sandbox has exited and its pipes are closed; rejects when bubblewrap could not be started. */
  exited: Promise<{ exitCode: number | null; signal: NodeJS.Signals | null }>;
  kill(): void;
}

export type SandboxSpawnRequest = Omit<SandboxRequest, "maxOutputBytes" | "signal" | "onOutput">;

/** Starts a command in a bubblewrap sandbox with piped stdio; the caller reads its output and ends it. */
export function spawnSandboxed(request: SandboxSpawnRequest): SandboxedProcess {
  const bwrap = findBwrap();
  if (!bwrap) throw new SandboxUnavailableError("container runtime not available: bubblewrap (bwrap) is not installed; install it with `apt-get install bubblewrap` (as root)");
  const asRoot = process.getuid?.() === 0;
  const child = spawn(bwrap, bwrapArguments(request), {
    stdio: ["pipe", "pipe", "pipe"],
    detached: true,
    // bwrap is pid 1 of the sandbox, and /proc/1/environ is readable inside: give it nothing to leak.
    env: { PATH: "/usr/bin:/bin" },
    ...(asRoot ? { uid: SANDBOX_UID, gid: SANDBOX_UID } : {}),
  });
  const exited = new Promise<{ exitCode: number | null; signal: NodeJS.Signals | null }>((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (exitCode, signal) => resolve({ exitCode, signal }));
  });
  return {
    pid: child.pid,
    stdin: child.stdin,
    stdout: child.stdout,
    stderr: child.stderr,
    exited,
    kill() {
      // The sandbox is its own process group and pid namespace: killing the group ends every process in it.
      if (child.pid === undefined) return;
      try {
        process.kill(-child.pid, "SIGKILL");
      } catch {
        // already gone
      }
    },
  };
}

/** Runs a command in a bubblewrap sandbox: new namespaces, read-only system, private /tmp, rlimits. */
export async function runSandboxed(request: SandboxRequest): Promise<SandboxResult> {
  const child = spawnSandboxed(request);
  // A command run to completion reads no input: it sees end-of-file, and a pipe it closed early is no failure.
  child.stdin.on("error", () => undefined);
  child.stdin.end();
  const output = { stdout: new BoundedText(request.maxOutputBytes), stderr: new BoundedText(request.maxOutputBytes) };
  const kill = () => child.kill();
  if (request.signal.aborted) kill();
  request.signal.addEventListener("abort", kill, { once: true });
  for (const stream of ["stdout", "stderr"] as const) {
    child[stream].setEncoding("utf8");
    child[stream].on("data", (chunk: string) => {
      output[stream].append(chunk);
      request.onOutput?.(chunk);
    });
  }
  try {
    const { exitCode, signal } = await child.exited;
    return {
      exitCode,
      signal,
      stdout: output.stdout.text(),
      stderr: output.stderr.text(),
      stdoutTruncated: output.stdout.truncated,
      stderrTruncated: output.stderr.truncated,
      aborted: request.signal.aborted,
    };
  } finally {
    request.signal.removeEventListener("abort", kill);
  }
}
