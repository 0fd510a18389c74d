import { spawn } from "node:child_process";
import { existsSync, lstatSync, readFileSync, readlinkSync } from "node:fs";
import { readdir } from "node:fs/promises";
import { constants as osConstants } from "node:os";
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
  /** What a private /tmp (a tmpfs, held in the host's memory) may hold in all. */
  tmpBytes: number;
}

export const DEFAULT_LIMITS: SandboxLimits = {
  cpuSeconds: 600,
  memoryBytes: 2 * 1024 ** 3,
  processes: 256,
  fileSizeBytes: 256 * 1024 ** 2,
  openFiles: 1024,
  tmpBytes: 1024 ** 3,
};

export interface SandboxRequest {
  command: string[];
  /** Host directory mounted read-write at /workspace (or `workDirMount`), the working directory. */
  workDir: string;
  /** Where `workDir` is seen inside; default /workspace. A CLI given host paths in its config sees it at its own path. */
  workDirMount?: string;
  /** The working directory inside, when not `workDir`'s mount itself. */
  cwd?: string;
  /** More host paths mounted at the given sandbox paths (read-write unless readOnly), in order, before `workDir`. */
  extraBinds?: { host: string; sandbox: string; readOnly?: boolean }[];
  /** Host directory mounted at /tmp; without one, /tmp is a private tmpfs. */
  tmpDir?: string;
  env: Record<string, string>;
  network: boolean;
  /**
   * Whether the command may create user namespaces of its own, nested inside this sandbox and seeing
   * nothing more of the host (a coding CLI's own sandbox for the commands it runs is bubblewrap too).
   */
  nestedNamespaces?: boolean;
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

/** A command killed by a signal, which bubblewrap reports as exit code 128 + its number, is given back as that signal. */
export function commandExit(exit: { exitCode: number | null; signal: NodeJS.Signals | null }): { exitCode: number | null; signal: NodeJS.Signals | null } {
  const signalNumber = (exit.exitCode ?? 0) - 128;
  const name = Object.entries(osConstants.signals).find(([, number]) => number === signalNumber)?.[0] as NodeJS.Signals | undefined;
  return name && exit.signal === null ? { exitCode: null, signal: name } : exit;
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

/** The descriptor on which bubblewrap reports the sandbox's pid namespace. */
const INFO_FD = 3;

export function bwrapArguments(request: SandboxSpawnRequest): string[] {
  const { limits } = request;
  const workDirMount = request.workDirMount ?? "/workspace";
  const env = Object.entries({ PATH: "/usr/local/bin:/usr/bin:/bin", HOME: workDirMount, TMPDIR: "/tmp", ...request.env }).flatMap(
    ([name, value]) => ["--setenv", name, value],
  );
  return [
    ...systemMounts(),
    "--proc", "/proc",
    "--dev", "/dev",
    ...(request.tmpDir ? ["--bind", request.tmpDir, "/tmp"] : ["--size", String(limits.tmpBytes), "--tmpfs", "/tmp"]),
    // In this order, so that no extra bind (a parent directory given read-only) hides the work directory.
    ...(request.extraBinds ?? []).flatMap((b) => [b.readOnly ? "--ro-bind" : "--bind", b.host, b.sandbox]),
    "--bind", request.workDir, workDirMount,
    // The root bubblewrap builds is a tmpfs too: once everything is mounted on it, nothing more is written there.
    "--remount-ro", "/",
    "--chdir", request.cwd ?? workDirMount,
    "--unshare-all",
    "--unshare-user",
    ...(request.nestedNamespaces ? [] : ["--disable-userns"]),
    "--cap-drop", "ALL",
    ...(request.network ? ["--share-net"] : []),
    "--die-with-parent",
    "--new-session",
    "--info-fd", String(INFO_FD),
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
  /**
   * Sends `signal` to every process in the sandbox but its init, so a command may end gracefully
   * (bubblewrap itself forwards no signal, and a signal to it ends the sandbox at once).
   */
  signalInside(signal: NodeJS.Signals): Promise<void>;
}

export type SandboxSpawnRequest = Omit<SandboxRequest, "maxOutputBytes" | "signal" | "onOutput">;

/** Starts a command in a bubblewrap sandbox with piped stdio; the caller reads its output and ends it. */
export function spawnSandboxed(request: SandboxSpawnRequest): SandboxedProcess {
  const bwrap = findBwrap();
  if (!bwrap) throw new SandboxUnavailableError("container runtime not available: bubblewrap (bwrap) is not installed; install it with `apt-get install bubblewrap` (as root)");
  const asRoot = process.getuid?.() === 0;
  const child = spawn(bwrap, bwrapArguments(request), {
    stdio: ["pipe", "pipe", "pipe", "pipe"],
    detached: true,
    // bwrap is pid 1 of the sandbox, and /proc/1/environ is readable inside: give it nothing to leak.
    env: { PATH: "/usr/bin:/bin" },
    ...(asRoot ? { uid: SANDBOX_UID, gid: SANDBOX_UID } : {}),
  });
  const exited = new Promise<{ exitCode: number | null; signal: NodeJS.Signals | null }>((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (exitCode, signal) => resolve({ exitCode, signal }));
  });
  const namespace = sandboxNamespace(child.stdio[INFO_FD] as Readable);
  let reported: SandboxNamespace | undefined;
  void namespace.then((sandbox) => (reported = sandbox));
  const sandboxed: SandboxedProcess = {
    pid: child.pid,
    stdin: child.stdin,
    stdout: child.stdout,
    stderr: child.stderr,
    exited,
    kill() {
      // The sandbox's init is bubblewrap's child: killing it ends every process of its pid namespace. It
      // may not be left to die with bubblewrap, which it does not until it is set up (waiting for
      // bubblewrap forever if that is gone), nor be sought in bubblewrap's process group, which it leaves
      // for a session of its own. It is found by bubblewrap's report once that has come (and still in the
      // sandbox's namespace, not a later process given its pid), as bubblewrap's child until then.
      const bubblewrap = child.exitCode === null && child.signalCode === null ? child.pid : undefined;
      const pids = [
        reported && isInNamespace(reported.initPid, reported) ? reported.initPid : undefined,
        ...(bubblewrap === undefined ? [] : [...childrenOf(bubblewrap), -bubblewrap]),
      ];
      for (const pid of pids) {
        if (pid === undefined) continue;
        try {
          process.kill(pid, "SIGKILL");
        } catch {
          // already gone
        }
      }
    },
    async signalInside(signal) {
      const sandbox = await namespace;
      if (sandbox) await signalNamespace(sandbox, signal);
    },
  };
  outliveNoSandbox(sandboxed);
  return sandboxed;
}

/**
 * The sandboxes this process runs: none may outlive its exit (bubblewrap's `--die-with-parent` does not
 * hold while one is set up). A process killed outright cannot see to it: its runner stops it in order.
 */
const runningSandboxes = new Set<SandboxedProcess>();

function outliveNoSandbox(sandbox: SandboxedProcess): void {
  if (runningSandboxes.size === 0) process.once("exit", killRunningSandboxes);
  runningSandboxes.add(sandbox);
  const forget = () => {
    runningSandboxes.delete(sandbox);
    if (runningSandboxes.size === 0) process.off("exit", killRunningSandboxes);
  };
  sandbox.exited.then(forget, forget);
}

function killRunningSandboxes(): void {
  for (const sandbox of runningSandboxes) sandbox.kill();
}

function isInNamespace(pid: number, sandbox: SandboxNamespace): boolean {
  try {
    return readlinkSync(`/proc/${pid}/ns/pid`) === sandbox.pidNamespace;
  } catch {
    return false;
  }
}

/** The pids of a process's children; none once it is gone. */
function childrenOf(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").split(" ").filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

interface SandboxNamespace {
  /** The host pid of the sandbox's init. */
  initPid: number;
  /** How /proc/<pid>/ns/pid reads for a process in the sandbox. */
  pidNamespace: string;
}

/** What bubblewrap reports on its info descriptor once the sandbox is set up; undefined when it could not start. */
function sandboxNamespace(info: Readable): Promise<SandboxNamespace | undefined> {
  let text = "";
  info.setEncoding("utf8");
  return new Promise((resolve) => {
    info.on("data", (chunk: string) => {
      if (text.length < 4096) text += chunk;
      const report = parseInfo(text);
      if (report) resolve(report);
    });
    info.once("error", () => resolve(undefined));
    info.once("close", () => resolve(undefined));
  });
}

function parseInfo(text: string): SandboxNamespace | undefined {
  try {
    const report = JSON.parse(text) as { "child-pid"?: unknown; "pid-namespace"?: unknown };
    const [initPid, namespace] = [report["child-pid"], report["pid-namespace"]];
    return typeof initPid === "number" && typeof namespace === "number" ? { initPid, pidNamespace: `pid:[${namespace}]` } : undefined;
  } catch {
    return undefined; // not whole yet
  }
}

/** Signals every process whose pid namespace is the sandbox's (its init ignores it anyway). */
async function signalNamespace(sandbox: SandboxNamespace, signal: NodeJS.Signals): Promise<void> {
  for (const entry of await readdir("/proc")) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid === sandbox.initPid || !isInNamespace(pid, sandbox)) continue;
    try {
      process.kill(pid, signal);
    } catch {
      // it exited meanwhile
    }
  }
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
