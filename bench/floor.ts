// The floor under Orka's server: what one run of the 3-tool-call loop costs the server's request thread
// in work no logic can remove, each part measured alone on this machine with the same tools Orka uses,
// as the CPU time of this process's main thread.
// - Durable writes: the writes of one run made straight through Orka's SQLite stores (no controller,
//   no API, no checks): the Task created Pending with its event, the attempt and its status, the eight
//   journal steps with their events, three tool calls recorded in the effect ledger with their result
//   steps, the result and the last events with the final answer, the end: 16 commits, one per
//   transaction, as a server serving one Task at a time makes them (at 50 at once the server's group
//   commit shares each commit among many Tasks' writes). WAL mode, checkpoints on their thread.
// - The worker's requests: five request/reply round trips over a pooled worker's IPC channel (the V8
//   serializer), the sizes of a run's requests; the CPU of this side only.
// - The API: a Task created over HTTP (POST, 201 with the Task) on a bare node:http server, and three
//   changes of it on one open watch stream; the client is another process.
// - Create → first model request (wall clock, not CPU): the same hops a Task's start makes, from a
//   POST to the first request reaching the timed model, with Orka's stores, IPC and OpenAI client and no
//   logic between them (bench/latency-floor.ts); Tasks one at a time, as bench/run.ts measures Orka.
// `node bench/floor.ts [--quick]` prints two tables; asserts nothing.
import { spawn } from "node:child_process";
import { once } from "node:events";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { request } from "undici";
import { API_VERSION } from "../src/resources/meta.ts";
import type { ExecutionEventInput } from "../src/store/data-store.ts";
import { succeeded } from "../src/worker/attempt-io.ts";
import { openBareStores } from "./stores.ts";
import { event, RunWrites } from "./run-writes.ts";
import { startChildServer } from "./child-server.ts";
import { markdownTable, p50p95 } from "./table.ts";
import { takeNoted } from "./timed-model.ts";
import { LATENCY_WARM_UP, latencySamples, percentiles } from "./timing.ts";

const QUICK = process.argv.includes("--quick");
const RUNS = QUICK ? 200 : 2000;
const WARM_UP = 50;
const LATENCY_SAMPLES = latencySamples(QUICK);
/** How often the driver asks the timed model whether a Task's first request has arrived. */
const LATENCY_POLL_MS = 5;

/** CPU time of this process's main thread (user + system) per run of `runs`, in ms: what the server's request thread would spend. */
async function cpuPerRun(runs: number, one: (i: number) => Promise<void> | void): Promise<number> {
  for (let i = 0; i < WARM_UP; i++) await one(-1 - i);
  const start = process.threadCpuUsage();
  for (let i = 0; i < runs; i++) await one(i);
  const used = process.threadCpuUsage(start);
  return (used.user + used.system) / 1000 / runs;
}

/** The writes of one run, through the stores a real run writes with, in the same commits. */
async function durableWrites(): Promise<number> {
  const stores = openBareStores("floor");
  const prompt = "x".repeat(200);
  try {
    return await cpuPerRun(RUNS, async (i) => {
      const run = await RunWrites.create(stores, `floor-${i}`, prompt);
      await run.start();
      run.step("request", [{ role: "user", content: prompt }], { system: "x" }, [event("WorkerStarted", "attempt 1"), event("ModelRequestStarted", "turn 1")]);
      // Each answer goes with its tool call, and with it the events since the last write.
      let sinceLastWrite: ExecutionEventInput[] = [];
      for (let call = 0; call < 3; call++) {
        const toolCall = { id: `call_${call}`, name: "noop", arguments: JSON.stringify({ n: call }) };
        const key = run.callStarted({ role: "assistant", content: null, toolCalls: [toolCall] }, call, [...sinceLastWrite, event("ModelRequestCompleted", "1 tool call"), event("ToolCallStarted", "noop", toolCall.arguments)]);
        run.callFinished(key, toolCall.id, `ok ${call}`);
        sinceLastWrite = [event("ToolCallCompleted", "noop returned 4 characters", `ok ${call}`), event("ModelRequestStarted", `turn ${call + 2}`)];
      }
      run.finalAnswer("done", [...sinceLastWrite, event("ModelRequestCompleted", "0 tool calls"), event("ModelMessage", "done", "done"), ...succeeded("done")]);
      await run.end();
    });
  } finally {
    await stores.close();
  }
}

/** The replies a worker's requests get in one run, by size: the first journal step, three tool calls each carrying its answer, the final answer with the result and the last events. */
const ROUND_TRIPS = [
  { request: 900, reply: 40 },
  { request: 1000, reply: 90 },
  { request: 1000, reply: 90 },
  { request: 1000, reply: 90 },
  { request: 800, reply: 40 },
];

/** Five request/reply round trips with a child process over IPC, as the pool's channel carries them; this side's CPU. */
async function workerChannel(): Promise<number> {
  // The child answers each request with a reply of the size asked for.
  const echo = "process.on('message', (batch) => process.send(batch.map((m) => ({ type: 'reply', id: m.id, status: 200, text: 'r'.repeat(m.replySize) }))));";
  const child = spawn(process.execPath, ["-e", echo], { stdio: ["ignore", "inherit", "inherit", "ipc"], serialization: "advanced" });
  const waiting = new Map<number, () => void>();
  child.on("message", (batch: { id: number }[]) => batch.forEach((reply) => waiting.get(reply.id)?.()));
  let id = 0;
  const roundTrip = (request: number, replySize: number) =>
    new Promise<void>((answered) => {
      const call = { type: "call", id: ++id, replySize, method: "POST", path: "journal/default/floor", headers: { authorization: "Bearer x".padEnd(50, "x"), "content-type": "application/json" }, body: "b".repeat(request) };
      waiting.set(call.id, answered);
      child.send([call]);
    });
  try {
    return await cpuPerRun(RUNS, async () => {
      for (const trip of ROUND_TRIPS) await roundTrip(trip.request, trip.reply);
    });
  } finally {
    child.kill();
  }
}

/** A Task created over HTTP and three changes of it on an open watch stream; the server's side, the client in another process. */
async function api(): Promise<number> {
  const task = JSON.stringify({ apiVersion: API_VERSION, kind: "Task", metadata: { name: "floor", namespace: "default", uid: "0".repeat(36), resourceVersion: "1" }, spec: { type: "ai", agentRef: { name: "loop" }, prompt: "x" }, status: { phase: "Pending" } });
  let watcher: http.ServerResponse | undefined;
  const server = http.createServer((req, res) => {
    if (req.url === "/watch") {
      res.writeHead(200, { "content-type": "text/event-stream" }).write(": connected\n\n");
      watcher = res;
      return;
    }
    let body = "";
    req.on("data", (chunk) => (body += chunk));
    req.on("end", () => {
      JSON.parse(body);
      res.writeHead(201, { "content-type": "application/json" }).end(task);
      // Pending, Running, Succeeded: each a change on the watch, written when it happens.
      for (const phase of ["Pending", "Running", "Succeeded"]) setImmediate(() => watcher!.write(`event: MODIFIED\ndata: ${task.replace("Pending", phase)}\n\n`));
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  // The client: one watch, then each create waits for its Succeeded on it; it reports when it is done. It
  // calls as the benchmark's client calls Orka (bench/server.ts), so the server reads the same requests.
  const client = `
    const { request } = await import("${import.meta.resolve("undici")}");
    const watch = await request("${url}/watch", { bodyTimeout: 120000 });
    watch.body.setEncoding("utf8");
    const chunks = watch.body[Symbol.asyncIterator]();
    let seen = 0, text = "";
    const succeeded = async (count) => { while (seen < count) { const { value } = await chunks.next(); text += value; const parts = text.split("Succeeded"); seen += parts.length - 1; text = parts.at(-1); } };
    for (let i = 1; i <= ${RUNS + WARM_UP}; i++) {
      if (i === ${WARM_UP + 1}) process.stdout.write("timing\\n");
      await (await request("${url}/tasks", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ name: "t" + i, type: "ai", agentRef: "loop", prompt: "t" + i }) })).body.text();
      await succeeded(i);
    }
    process.exit(0);`;
  const child = spawn(process.execPath, ["--input-type=module", "-e", client], { stdio: ["ignore", "pipe", "inherit"] });
  try {
    await once(child.stdout!, "data");
    const start = process.threadCpuUsage();
    const [code] = (await once(child, "exit")) as [number | null];
    const used = process.threadCpuUsage(start);
    if (code !== 0) throw new Error(`the floor's HTTP client failed (exit ${code})`);
    return (used.user + used.system) / 1000 / RUNS;
  } finally {
    child.kill();
    watcher?.destroy();
    server.close();
  }
}

/** Create → first model request over the bare chain of bench/latency-floor.ts, one Task at a time: p50 and p95 in ms. */
async function createToFirstRequest(): Promise<{ p50_ms: number; p95_ms: number }> {
  const model = await startChildServer(join(import.meta.dirname, "timed-model.ts"));
  try {
    const chain = await startChildServer(join(import.meta.dirname, "latency-floor.ts"), ["server", model.url]);
    try {
      const latencies: number[] = [];
      for (let i = -LATENCY_WARM_UP; i < LATENCY_SAMPLES; i++) {
        const name = i < 0 ? `warm-up-${-i}` : `floor-${i}`;
        const sent = performance.timeOrigin + performance.now();
        // As Orka's latency Tasks are created: through undici's request (bench/server.ts).
        const response = await request(`${chain.url}/tasks`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ name, type: "ai", agentRef: "floor", prompt: name }) });
        await response.body.text();
        if (response.statusCode !== 201) throw new Error(`the latency floor's server answered ${response.statusCode}`);
        // The next Task starts once this one's request has reached the model, on a quiet chain.
        const arrived = await firstRequestOf(model.url, name);
        if (i >= 0) latencies.push(arrived - sent);
      }
      return percentiles(latencies);
    } finally {
      chain.close();
    }
  } finally {
    model.close();
  }
}

/** When the timed model heard the first request of conversation `name`, asking it every few ms (at most 10 s). */
async function firstRequestOf(modelURL: string, name: string): Promise<number> {
  for (const deadline = Date.now() + 10_000; Date.now() < deadline; await new Promise((wait) => setTimeout(wait, LATENCY_POLL_MS))) {
    const first = (await takeNoted(modelURL)).find((note) => note.kind === "model" && note.conversation === name);
    if (first) return first.arrivedAt;
  }
  throw new Error(`the timed model did not hear ${name}'s first request within 10 s`);
}

const parts = [
  { part: "durable writes through Orka's stores (16 commits: the Task, its attempt and status, eight journal steps, three ledger calls, the final answer with the result and the last events, the end)", ms: await durableWrites() },
  { part: "the worker's five requests and replies over IPC (this side: serializing, the pipe writes and reads)", ms: await workerChannel() },
  { part: "the API: a create over HTTP on a bare node:http server, and three changes on one watch stream (the server's side)", ms: await api() },
];
const floor = parts.reduce((sum, part) => sum + part.ms, 0);
console.log(`\nThe floor under the server's work per run, ${RUNS} runs of each part one at a time after ${WARM_UP} untimed ones${QUICK ? " (quick run)" : ""}: CPU time of this process's main thread per run. No controller, no checks, no fastify: what remains when Orka's own logic costs nothing.\n`);
console.log(markdownTable(["part", "CPU per run, ms"], [...parts.map(({ part, ms }) => [part, ms.toFixed(2)]), ["floor: all three", floor.toFixed(2)]]));

const latency = await createToFirstRequest();
console.log(`\nCreate → first model request with no logic between the hops (bench/latency-floor.ts): ${LATENCY_SAMPLES} Tasks one at a time after ${LATENCY_WARM_UP} untimed ones, ` +
  `from the POST sent to the request's arrival at the timed model (bench/timed-model.ts), both on the machine's wall clock, as bench/run.ts measures Orka.\n`);
console.log(markdownTable(["hops", "p50 / p95 ms"], [[
  "POST /tasks over HTTP → the Task and its event committed (2 commits), 201 → the attempt, Running and its event committed (3) → start over IPC → " +
    "the worker's first journal step over IPC, committed with its events (1), answered → the request through Orka's OpenAI client",
  p50p95(latency),
]]));
