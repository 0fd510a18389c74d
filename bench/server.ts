import { spawn } from "node:child_process";
import { once } from "node:events";
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { setTimeout as sleep } from "node:timers/promises";
import { request, type Dispatcher } from "undici";
import { serverConfigFrom } from "../src/config.ts";
import { isTerminalPhase, TERMINAL_PHASES } from "../src/resources/task.ts";
import { startOrka } from "../src/server.ts";
import { WORKER_NODE_FLAGS } from "../src/runner/local/pool.ts";
import { startChildServer } from "./child-server.ts";
import { NOOP_TOOL } from "./peers/fake-model.ts";
import { processTreeUsage } from "./process-tree.ts";

export const BENCH_ADMIN_TOKEN = "bench-admin-token-0000";

/** A temporary directory for one benchmark's server. */
export function benchDirectory(name: string): string {
  const dir = mkdtempSync(join(tmpdir(), `orka-bench-${name}-`));
  // As root, sandboxed code and coding CLIs run as nobody, which must be able to pass through to their directories.
  chmodSync(dir, 0o711);
  return dir;
}

/**
 * The benchmark's loop declared in an Orka server: the `noop` custom HTTP Tool, served at `toolURL`/noop,
 * and for each of `agents` (name → the fake model's URL) an `openai` Provider of that model and an Agent
 * offered the tool.
 */
export async function declareLoop(orka: ReturnType<typeof adminClient>, toolURL: string, agents: Record<string, string>): Promise<void> {
  await orka.api("POST", "/secrets", { name: "key", stringData: { "api-key": "k" } });
  await orka.api("POST", "/tools", { metadata: { name: NOOP_TOOL.name }, spec: { description: NOOP_TOOL.description, parameters: NOOP_TOOL.parameters, http: { url: `${toolURL}/noop` } } });
  for (const [name, modelURL] of Object.entries(agents)) {
    await orka.api("POST", "/providers", { metadata: { name }, spec: { type: "openai", baseURL: `${modelURL}/v1`, secretRef: { name: "key" }, defaultModel: "fake" } });
    await orka.api("POST", "/agents", { metadata: { name }, spec: { providerRef: { name }, systemPrompt: { inline: "x" }, tools: [{ name: NOOP_TOOL.name }] } });
  }
}

/** How long the driver waits for an answer, and for each part of its body. */
const ANSWER_TIMEOUT_MS = 120_000;

/** A watch frame that may tell of a Task's end: any other is not parsed. */
const TERMINAL_FRAME = new RegExp(`"phase":\\s*"(${TERMINAL_PHASES.join("|")})"`);

/**
 * The admin's REST client of the Orka server at `url`. It is built on undici's `request`, not `fetch`: the
 * driver shares the machine's two cores with what it measures, and through fetch and its web streams it
 * took about three times the CPU (docs/performance.md).
 */
export function adminClient(url: string) {
  const headers = { authorization: `Bearer ${BENCH_ADMIN_TOKEN}` };
  /** Calls `/api/v1<path>` as the admin; a refusal throws with its answer, and so does no answer within 2 minutes. */
  async function api(method: string, path: string, body?: unknown): Promise<any> {
    const response = await request(`${url}/api/v1${path}`, {
      method: method as Dispatcher.HttpMethod,
      headers: body === undefined ? headers : { ...headers, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
      headersTimeout: ANSWER_TIMEOUT_MS,
      bodyTimeout: ANSWER_TIMEOUT_MS,
    });
    const json = await response.body.json();
    if (response.statusCode < 200 || response.statusCode > 299) throw new Error(`${method} ${path}: HTTP ${response.statusCode} ${JSON.stringify(json)}`);
    return json;
  }
  /** Reads `/api/v1<path>` (an event stream) to its end as the admin. */
  async function stream(path: string): Promise<string> {
    const response = await request(`${url}/api/v1${path}`, { headers, bodyTimeout: ANSWER_TIMEOUT_MS });
    return response.body.text();
  }
  /** Creates an ai Task and follows its event stream to the end (no polling); throws unless it Succeeded. */
  async function runTask(name: string, agent: string): Promise<void> {
    await api("POST", "/tasks", { name, type: "ai", agentRef: agent, prompt: name });
    const end = /event: stream_complete\ndata: (.*)\n/.exec(await stream(`/tasks/${name}/stream`));
    const phase = end ? JSON.parse(end[1]).type : "unknown";
    if (phase !== "Succeeded") throw new Error(`${name}: ${phase}`);
  }
  /**
   * Follows every Task of the default namespace on one watch (`GET /api/v1/watch/tasks`), as a client
   * that runs many Tasks does; `runTask` then creates an ai Task and waits for the watch to show it ended,
   * and throws unless it Succeeded; `ended` tells how a Task ends. `close()` ends the watch.
   */
  async function watchTasks() {
    type End = { phase?: string; gone?: string };
    const waiting = new Map<string, (end: End) => void>();
    let gone: string | undefined;
    const abort = new AbortController();
    // Orka's stream sends a keep-alive comment every 15 s: a watch silent for the answer timeout is stuck, and ends.
    const response = await request(`${url}/api/v1/watch/tasks`, { headers, signal: abort.signal, bodyTimeout: ANSWER_TIMEOUT_MS });
    if (response.statusCode !== 200) {
      const why = await response.body.text().catch(() => "");
      throw new Error(`GET /watch/tasks: HTTP ${response.statusCode} ${why}`);
    }
    response.body.setEncoding("utf8");
    const follow = async () => {
      let pending = "";
      for await (const text of response.body as AsyncIterable<string>) {
        const frames = (pending + text).split("\n\n");
        pending = frames.pop()!;
        for (const frame of frames) {
          const data = /^data: (.*)$/m.exec(frame)?.[1];
          if (!data || !TERMINAL_FRAME.test(data)) continue;
          const task = JSON.parse(data) as { metadata?: { name?: string }; status?: { phase?: string } };
          const phase = task.status?.phase;
          if (phase && isTerminalPhase(phase)) waiting.get(task.metadata?.name ?? "")?.({ phase });
        }
      }
    };
    // When the watch ends (closed, or the server went), nothing waiting on it would hear of its Task.
    const following = follow()
      .catch(() => undefined)
      .finally(() => {
        gone = "the watch of the namespace's Tasks ended";
        for (const settle of waiting.values()) settle({ gone });
      });
    /** The phase the Task `name` ends in, as the watch shows it (ask before creating it), or why the watch cannot tell. */
    const ended = (name: string): Promise<End> => {
      if (gone) return Promise.resolve({ gone });
      return new Promise<End>((resolve) => waiting.set(name, resolve)).finally(() => waiting.delete(name));
    };
    return {
      ended,
      async runTask(name: string, agent: string): Promise<void> {
        const end = ended(name);
        await api("POST", "/tasks", { name, type: "ai", agentRef: agent, prompt: name });
        const { phase, gone } = await end;
        if (phase !== "Succeeded") throw new Error(`${name}: ${phase ?? gone}`);
      },
      async close(): Promise<void> {
        abort.abort();
        await following;
      },
    };
  }
  return { url, api, stream, runTask, watchTasks };
}

/** An embedded Orka in this process, in a temporary directory, with the admin's REST client. */
export async function startBenchServer(name: string, env: Record<string, string> = {}) {
  const dir = benchDirectory(name);
  const dataDir = join(dir, "state");
  const orka = await startOrka({
    ...serverConfigFrom({ ORKA_PORT: "0", ORKA_DATA_DIR: dataDir, ORKA_WORK_DIR: join(dir, "work"), ORKA_ADMIN_TOKEN: BENCH_ADMIN_TOKEN, ORKA_LOG_LEVEL: "silent", ...env }, dir),
    cliConfigPath: "",
  });
  return {
    ...adminClient(orka.url),
    dataDir,
    async close(): Promise<void> {
      await orka.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const REPO = join(import.meta.dirname, "..");

/**
 * `orka serve` in its own process, in a temporary directory, as bin/orka starts it (loopback egress
 * allowed for the benchmarks' fake models and tools), with the admin's REST client, once it listens. Its
 * process tree can be measured alone (`pid`); `close()` stops it (SIGTERM, then SIGKILL after 15 s), then
 * every process of its tree that still runs, by pid, and removes the directory.
 */
export async function startOrkaProcess(name: string, env: Record<string, string> = {}) {
  const dir = benchDirectory(name);
  const dataDir = join(dir, "state");
  // The caller's own ORKA_ settings (a developer's shell) would change what is measured: only these count.
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([variable]) => !variable.startsWith("ORKA_")));
  const childEnv = {
    ...inherited,
    ORKA_HOST: "127.0.0.1",
    ORKA_PORT: "0",
    ORKA_DATA_DIR: dataDir,
    ORKA_WORK_DIR: join(dir, "work"),
    ORKA_ADMIN_TOKEN: BENCH_ADMIN_TOKEN,
    ORKA_LOG_LEVEL: "silent",
    ORKA_ALLOW_LOOPBACK_EGRESS: "true",
    ...env,
  };
  const child = spawn(process.execPath, ["--max-semi-space-size=8", join(REPO, "src/cli/main.ts"), "serve"], { cwd: dir, env: childEnv, stdio: ["ignore", "pipe", "inherit"] });
  const running = () => child.exitCode === null && child.signalCode === null;
  async function close(): Promise<void> {
    // Read only while the server runs: once it has ended, its pid may be another process's.
    const tree = running() ? processTreeUsage(child.pid!).pids : [];
    if (running()) {
      const exited = once(child, "exit");
      child.kill("SIGTERM");
      await Promise.race([exited, sleep(15_000, undefined, { ref: false }).then(() => child.kill("SIGKILL"))]);
    }
    for (const pid of tree) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // already ended
      }
    }
    rmSync(dir, { recursive: true, force: true });
  }
  const listening = (async () => {
    for await (const line of createInterface({ input: child.stdout })) {
      const url = /^orka listening on (\S+)/.exec(line)?.[1];
      if (url) return url;
    }
    throw new Error("the Orka server ended before it listened");
  })();
  try {
    const url = await Promise.race([listening, sleep(60_000, undefined, { ref: false }).then(() => Promise.reject(new Error("the Orka server did not listen within 60 s")))]);
    return { ...adminClient(url), pid: child.pid!, dataDir, close };
  } catch (err) {
    await close();
    throw err;
  }
}

/**
 * The bare loop (bench/bare-loop.ts) against the model at `modelURL`, in processes of its own with Orka's
 * node flags, and the admin's client of it (it takes the client's requests as Orka does, checking nothing).
 */
export async function startBareLoop(modelURL: string) {
  const bare = await startChildServer(join(import.meta.dirname, "bare-loop.ts"), ["server", modelURL], WORKER_NODE_FLAGS);
  return { ...adminClient(bare.url), pid: bare.pid, close: bare.close };
}
