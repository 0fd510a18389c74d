import { spawn, execFile, type ChildProcess } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";

const ROOT = resolve(import.meta.dirname, "../..");
const CLI = join(ROOT, "src/cli/main.ts");
const run = promisify(execFile);

export interface OrkaUnderTest {
  url: string;
  token: string;
  dataDir: string;
  /** The server process's pid (it changes on restart). */
  readonly pid: number;
  /** Calls the REST API; returns status and parsed body. */
  api<T = any>(method: string, path: string, body?: unknown, token?: string): Promise<{ status: number; body: T }>;
  /** Runs the real CLI against this server. */
  cli(args: string[], input?: string): Promise<{ code: number; stdout: string; stderr: string }>;
  /** Waits until the Task reaches a phase in `phases` (or fails the test after `timeoutMs`). */
  waitFor(name: string, phases?: string[], timeoutMs?: number, namespace?: string): Promise<any>;
  stop(): Promise<void>;
  /** Whether the server process is still running. */
  readonly alive: boolean;
  /** The pids of the server's worker processes, read from /proc. */
  workerPids(): number[];
  /** Sends SIGTERM and waits (at most `timeoutMs`) for the process to exit, leaving the data dir for a restart. */
  terminate(timeoutMs?: number): Promise<void>;
  /** Stops the process with SIGKILL, leaving the data dir for a restart. */
  kill(): Promise<void>;
  restart(): Promise<void>;
  /** Everything the server process printed (stdout and stderr), across restarts. */
  output(): string;
}

/** Starts a real `orka serve` on port 0 with a temp data dir; stop() kills it by its own pid. */
/** An env value of undefined removes the variable (e.g. ORKA_ADMIN_TOKEN, to let the server generate one). */
export async function startOrkaServer(env: Record<string, string | undefined> = {}): Promise<OrkaUnderTest> {
  const dataDir = mkdtempSync(join(tmpdir(), "orka-it-"));
  const token = `test-admin-token-${Math.random().toString(36).slice(2)}`;
  const cliConfig = join(dataDir, "cli-config.yaml");
  const childEnv = {
    ...process.env,
    ORKA_PORT: "0",
    ORKA_HOST: "127.0.0.1",
    ORKA_DATA_DIR: join(dataDir, "state"),
    ORKA_ADMIN_TOKEN: token,
    ORKA_CLI_CONFIG: cliConfig,
    ORKA_MODEL_RETRY_BASE_MS: "20",
    ORKA_WORKER_PROCESSES: "2",
    ORKA_LOG_LEVEL: "warn",
    ...env,
  };
  let child: ChildProcess;
  let url = "";
  let printed = "";

  const launch = () =>
    new Promise<void>((resolvePromise, reject) => {
      child = spawn(process.execPath, [CLI, "serve"], { env: childEnv, stdio: ["ignore", "pipe", "pipe"] });
      let output = "";
      const timer = setTimeout(() => reject(new Error(`orka serve did not start:\n${output}`)), 20_000);
      child.stdout!.on("data", (chunk) => {
        output += chunk;
        printed += chunk;
        const match = /orka listening on (http:\/\/\S+)/.exec(output);
        if (match) {
          clearTimeout(timer);
          url = match[1];
          resolvePromise();
        }
      });
      child.stderr!.on("data", (chunk) => {
        output += chunk;
        printed += chunk;
        if (process.env.ORKA_TEST_VERBOSE) process.stderr.write(chunk);
      });
      child.on("exit", (code) => {
        clearTimeout(timer);
        if (!url) reject(new Error(`orka serve exited with ${code}:\n${output}`));
      });
    });

  const terminate = (signal: NodeJS.Signals) =>
    new Promise<void>((resolvePromise) => {
      if (!child || child.exitCode !== null || child.signalCode !== null) return resolvePromise();
      child.once("exit", () => resolvePromise());
      child.kill(signal);
    });

  await launch().catch((err: unknown) => {
    rmSync(dataDir, { recursive: true, force: true });
    throw err;
  });

  const server: OrkaUnderTest = {
    get url() {
      return url;
    },
    get pid() {
      return child.pid!;
    },
    get alive() {
      return child.exitCode === null && child.signalCode === null;
    },
    workerPids: () => childProcessesOf(child.pid!, "worker-process"),
    async terminate(timeoutMs = 20_000) {
      let timer: NodeJS.Timeout | undefined;
      const timedOut = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`orka serve did not exit within ${timeoutMs} ms of SIGTERM`)), timeoutMs);
      });
      await Promise.race([terminate("SIGTERM"), timedOut]).finally(() => clearTimeout(timer));
    },
    token,
    dataDir,
    async api(method, path, body, asToken = token) {
      const response = await fetch(`${url}${path}`, {
        method,
        headers: { ...(asToken ? { authorization: `Bearer ${asToken}` } : {}), ...(body !== undefined ? { "content-type": "application/json" } : {}) },
        body: body !== undefined ? JSON.stringify(body) : undefined,
      });
      const text = await response.text();
      let parsed: any = text;
      try {
        parsed = text ? JSON.parse(text) : undefined;
      } catch {
        // keep text
      }
      return { status: response.status, body: parsed };
    },
    async cli(args, input) {
      try {
        const child = run(process.execPath, [CLI, "--server", url, "--token", token, ...args], {
          env: { ...process.env, ORKA_CLI_CONFIG: cliConfig },
          timeout: 60_000,
        });
        if (input !== undefined) {
          child.child.stdin!.end(input);
        }
        const { stdout, stderr } = await child;
        return { code: 0, stdout, stderr };
      } catch (err: any) {
        return { code: err.code ?? 1, stdout: err.stdout ?? "", stderr: err.stderr ?? "" };
      }
    },
    async waitFor(name, phases = ["Succeeded", "Failed", "Cancelled"], timeoutMs = 20_000, namespace = "default") {
      const deadline = Date.now() + timeoutMs;
      let last: any;
      while (Date.now() < deadline) {
        const { status, body } = await server.api("GET", `/api/v1/tasks/${name}?namespace=${namespace}`);
        last = body;
        if (status === 200 && phases.includes(body.status?.phase)) return body;
        await new Promise((r) => setTimeout(r, 100));
      }
      throw new Error(`task ${name} did not reach ${phases.join("/")} in ${timeoutMs} ms; last: ${JSON.stringify(last?.status)}`);
    },
    async stop() {
      await terminate("SIGTERM");
      rmSync(dataDir, { recursive: true, force: true });
    },
    async kill() {
      await terminate("SIGKILL");
    },
    async restart() {
      await terminate("SIGKILL");
      await launch();
    },
    output: () => printed,
  };
  return server;
}

/** Processes whose parent is `parentPid` and whose command line contains `marker`. */
export function childProcessesOf(parentPid: number, marker: string): number[] {
  return processesMatching(marker).filter((pid) => {
    try {
      // The parent pid is the 4th field of /proc/PID/stat, after the parenthesised command name.
      return Number(readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ")[1]) === parentPid;
    } catch {
      return false;
    }
  });
}

/** Processes whose command line (NUL-separated arguments) contains `marker`. */
export function processesMatching(marker: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, "utf8").includes(marker)) pids.push(Number(entry));
    } catch {
      // exited meanwhile
    }
  }
  return pids;
}

/** Whether a process no longer runs: gone, or a zombie waiting for init to reap it. */
export function notRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return true;
  }
  try {
    return readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.startsWith("Z") ?? true;
  } catch {
    return true;
  }
}

/** CPU time (user + system, in clock ticks of 10 ms) a process has used so far. */
export function cpuTicksOf(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
  return Number(fields[11]) + Number(fields[12]);
}

export const API_VERSION = "core.orka.ai/v1alpha1";
