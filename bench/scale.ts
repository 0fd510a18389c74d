// node bench/scale.ts [--quick]: Tasks at scale. Creates Tasks through the API with concurrent clients
// in this process, the server in its own (as `orka serve` runs; each a real create, answered 201; a namespace limit of one active Task and a model that never answers
// keep them queued, so every one is reconciled as a Pending Task would be), then fills the store up to the
// large size by direct inserts (a second connection to the same database: the filler is never reconciled)
// and times lists through the API (a label selector matching one batch of Tasks, and plain pages) and
// reads by name through the store. Prints its figures; asserts nothing.
import { createServer, type Socket } from "node:net";
import { once } from "node:events";
import { join } from "node:path";
import { cpus, loadavg } from "node:os";
import { API_VERSION, type Resource } from "../src/resources/meta.ts";
import type { TaskSpec, TaskStatus } from "../src/resources/task.ts";
import { SecretCipher } from "../src/store/secret-cipher.ts";
import { openDatabase } from "../src/store/sqlite/db.ts";
import { SqliteResourceStore } from "../src/store/sqlite/resource-store.ts";
import { mainThreadCpuSeconds, processTreeUsage } from "./process-tree.ts";
import { startOrkaProcess } from "./server.ts";
import { percentiles } from "./timing.ts";

const QUICK = process.argv.includes("--quick");
const CREATES = QUICK ? 1_000 : 10_000;
const TOTAL = QUICK ? 10_000 : 100_000;
const CLIENTS = 50;
const BATCH_SIZE = 100;
const LIST_SAMPLES = QUICK ? 50 : 200;
const PAGE_LIMIT = 50;
const BATCH_LABEL = "bench.orka.dev/batch";
/**
 * The filler's prompt: real prompts and statuses often take a Task past 1 KiB, where SQLite starts
 * keeping part of a row in overflow pages, so the size of the rows matters to what a read costs.
 */
const FILLER_PROMPT = "Summarise the open issues of the repository and propose the next step for each. ".repeat(19);
const READ_SAMPLES = QUICK ? 2_000 : 20_000;

const batchOf = (index: number) => `b${Math.floor(index / BATCH_SIZE)}`;
const taskName = (index: number) => `t-${String(index).padStart(6, "0")}`;

/** A model endpoint that accepts connections and never answers: the one Task let run stays Running. */
async function startSilentModel() {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    close() {
      for (const socket of sockets) socket.destroy();
      server.close();
    },
  };
}

/** Calls `call` for indexes from..to-1 from `clients` concurrent loops; returns the seconds taken. */
async function concurrently(from: number, to: number, clients: number, call: (index: number) => Promise<unknown>): Promise<number> {
  let next = from;
  const started = performance.now();
  await Promise.all(Array.from({ length: clients }, async () => {
    while (next < to) await call(next++);
  }));
  return (performance.now() - started) / 1000;
}

/** Times `samples` sequential calls, after a few untimed ones. */
async function timed(samples: number, call: (sample: number) => Promise<unknown>) {
  for (let i = 0; i < 3; i++) await call(i);
  const times: number[] = [];
  for (let i = 0; i < samples; i++) {
    const started = performance.now();
    await call(i);
    times.push(performance.now() - started);
  }
  return percentiles(times);
}

/** The filler: finished Tasks written straight into the store, in large transactions. */
function fill(dataDir: string, from: number, to: number): void {
  const db = openDatabase(join(dataDir, "orka.db"));
  const store = new SqliteResourceStore(db, SecretCipher.fromKeyFile(join(dataDir, "secret.key")));
  const now = new Date().toISOString();
  const insert = db.transaction((start: number, end: number) => {
    for (let i = start; i < end; i++) {
      const task: Resource<TaskSpec, TaskStatus> = {
        apiVersion: API_VERSION,
        kind: "Task",
        metadata: { name: taskName(i), namespace: "default", labels: { [BATCH_LABEL]: batchOf(i) } },
        spec: { type: "ai", agentRef: { name: "silent" }, prompt: `filler ${i}: ${FILLER_PROMPT}` } as TaskSpec,
        status: { phase: "Succeeded", queuedAt: now, startTime: now, completionTime: now, attempts: 1, message: "task completed successfully" } as TaskStatus,
      };
      // The store's writes are synchronous under their promise, so they join this transaction.
      void store.create(task);
    }
  });
  for (let start = from; start < to; start += 5_000) insert(start, Math.min(to, start + 5_000));
  db.close();
}

/**
 * Reads by name through the store at the large size, in this process (no HTTP): what a reconcile pass or
 * a tool call's checks pay for each object they read. A Task, and the Agent beside 100,000 Tasks.
 */
async function storeReads(dataDir: string) {
  const db = openDatabase(join(dataDir, "orka.db"));
  try {
    const store = new SqliteResourceStore(db, SecretCipher.fromKeyFile(join(dataDir, "secret.key")));
    const task = await timed(READ_SAMPLES, (sample) => store.get("Task", "default", taskName(CREATES + CLIENTS + ((sample * 7919) % (TOTAL - CREATES - CLIENTS)))));
    const agent = await timed(READ_SAMPLES, () => store.get("Agent", "default", "silent"));
    return { task, agent };
  } finally {
    db.close();
  }
}

/** CPU seconds so far: the server process, its main thread, and this process (the clients). */
function cpuNow(serverPid: number) {
  const clients = process.cpuUsage();
  return { server: processTreeUsage(serverPid).rootCpuSeconds, serverThread: mainThreadCpuSeconds(serverPid), clients: (clients.user + clients.system) / 1e6 };
}

const model = await startSilentModel();
const orka = await startOrkaProcess("scale", { ORKA_WORKER_SLOTS: "1", ORKA_MAX_ACTIVE_TASKS_PER_NAMESPACE: "1" });
try {
  await orka.api("POST", "/secrets", { name: "key", stringData: { "api-key": "k" } });
  await orka.api("POST", "/providers", { metadata: { name: "silent" }, spec: { type: "openai", baseURL: `${model.url}/v1`, secretRef: { name: "key" }, defaultModel: "fake" } });
  await orka.api("POST", "/agents", { metadata: { name: "silent" }, spec: { providerRef: { name: "silent" }, systemPrompt: { inline: "x" } } });

  // Untimed creates first, so that loading the modules of the create and reconcile paths is not measured.
  await concurrently(CREATES, CREATES + CLIENTS, CLIENTS, (i) => orka.api("POST", "/tasks", { name: taskName(i), type: "ai", agentRef: "silent", prompt: `task ${i}` }));
  const cpuBefore = cpuNow(orka.pid);
  const createSeconds = await concurrently(0, CREATES, CLIENTS, (i) =>
    orka.api("POST", "/tasks", { name: taskName(i), type: "ai", agentRef: "silent", prompt: `task ${i}`, labels: { [BATCH_LABEL]: batchOf(i) } }),
  );
  const createRate = CREATES / createSeconds;
  // The machine may be shared: CPU time per create does not depend on what else runs.
  const cpuAfter = cpuNow(orka.pid);
  const msPerCreate = (part: keyof typeof cpuAfter) => (((cpuAfter[part] - cpuBefore[part]) * 1000) / CREATES).toFixed(2);
  console.error(`created ${CREATES} Tasks in ${createSeconds.toFixed(1)} s`);

  const fillStarted = performance.now();
  fill(orka.dataDir, CREATES + CLIENTS, TOTAL);
  const fillSeconds = (performance.now() - fillStarted) / 1000;
  console.error(`filled to ${TOTAL} Tasks in ${fillSeconds.toFixed(1)} s`);

  const batches = TOTAL / BATCH_SIZE;
  const selector = await timed(LIST_SAMPLES, async (sample) => {
    const batch = `b${(sample * 7919) % batches}`;
    const page = await orka.api("GET", `/tasks?labelSelector=${encodeURIComponent(`${BATCH_LABEL}=${batch}`)}&limit=${PAGE_LIMIT}`);
    if (page.items.length !== PAGE_LIMIT) throw new Error(`selector ${batch}: ${page.items.length} items`);
  });
  const reads = await storeReads(orka.dataDir);
  let cursor = "";
  const plain = await timed(LIST_SAMPLES, async () => {
    const page = await orka.api("GET", `/tasks?limit=${PAGE_LIMIT}${cursor ? `&continue=${cursor}` : ""}`);
    cursor = page.metadata.continue;
  });

  console.log(`${QUICK ? "Quick run" : "Run"}: Node ${process.version}, ${cpus().length} × ${cpus()[0]?.model.trim()}, load average ${loadavg()[0].toFixed(1)}.`);
  console.log(`create: ${CREATES} Tasks through POST /api/v1/tasks from ${CLIENTS} concurrent clients in ${createSeconds.toFixed(1)} s = ${createRate.toFixed(0)} Tasks/s; CPU per create: the server process ${msPerCreate("server")} ms (its main thread ${msPerCreate("serverThread")}), the clients ${msPerCreate("clients")} ms`);
  console.log(`filler: ${TOTAL - CREATES - CLIENTS} finished Tasks inserted directly into the store in ${fillSeconds.toFixed(1)} s (${TOTAL} Tasks in all)`);
  console.log(`list at ${TOTAL} Tasks, GET /api/v1/tasks?labelSelector=${BATCH_LABEL}=<batch of ${BATCH_SIZE}>&limit=${PAGE_LIMIT}: p50 ${selector.p50_ms.toFixed(1)} ms, p95 ${selector.p95_ms.toFixed(1)} ms (${LIST_SAMPLES} samples)`);
  console.log(`list at ${TOTAL} Tasks, GET /api/v1/tasks?limit=${PAGE_LIMIT} following continue: p50 ${plain.p50_ms.toFixed(1)} ms, p95 ${plain.p95_ms.toFixed(1)} ms (${LIST_SAMPLES} pages)`);
  const micros = (figure: { p50_ms: number; p95_ms: number }) => `p50 ${(figure.p50_ms * 1000).toFixed(1)} µs, p95 ${(figure.p95_ms * 1000).toFixed(1)} µs`;
  console.log(`read by name through the store at ${TOTAL} Tasks (the filler's of ${FILLER_PROMPT.length + 20} characters of prompt), ${READ_SAMPLES} samples: a Task ${micros(reads.task)}; the Agent ${micros(reads.agent)}`);
} finally {
  await orka.close();
  model.close();
}
