// The benchmark's loop through Orka's own pieces with no logic between them: what Orka's throughput could
// reach on this machine if its controller, checks, API framework and policies cost nothing, while every
// step stays durable. `node bench/bare-loop.ts server <model URL>` serves it and prints `port <n>`; it
// forks itself as the worker (`… worker <model URL>`). bench/run.ts, bench/drain.ts and
// bench/tool-overhead.ts drive it as they drive Orka, against the fake model of bench/peers/ or the timed
// model (bench/timed-model.ts): both ask for the `noop` tool three times and serve it at `<model URL>/noop`.
// - The server (a bare node:http server, Orka's SQLite stores with its group commit, one commit per turn
//   of the event loop, and nothing leaving the process before it): `POST /api/v1/tasks` creates the Task
//   Pending with its event and answers 201; then the attempt is recorded, the Task set Running and the
//   start sent to the worker. `GET /api/v1/watch/tasks` streams each change of a Task's phase.
// - The worker (a child process on an IPC channel as the pool's: the V8 serializer, messages batched per
//   turn) runs the loop with Orka's OpenAI client and sends the server the run's five requests: the first
//   journal step; each tool call with the answer that asked for it (written with the call's start in the
//   effect ledger, committed before the call is made), the server making the call over HTTP and writing
//   its reply with its result step; the final answer with the result and the last events. Then its exit,
//   and the server records the end.
// Nothing is checked, looked up, admitted, authorized, validated, scrubbed or logged (Orka also stores an
// attempt's output). A run that fails ends its Task Failed; the worker process ending ends the server.
import { fork } from "node:child_process";
import http from "node:http";
import { fileURLToPath } from "node:url";
import * as undici from "undici";
import { openAIModel } from "../src/providers/openai.ts";
import type { ChatMessage, ToolCall } from "../src/providers/model.ts";
import { BatchedSender } from "../src/runner/local/batched-sender.ts";
import { WORKER_NODE_FLAGS } from "../src/runner/local/pool.ts";
import type { ExecutionEventInput } from "../src/store/data-store.ts";
import { GroupCommit } from "../src/store/sqlite/group-commit.ts";
import { succeeded } from "../src/worker/attempt-io.ts";
import { listenAndAnnounce } from "./child-server.ts";
import { NOOP_TOOL } from "./peers/fake-model.ts";
import { event, RunWrites } from "./run-writes.ts";
import { openBareStores } from "./stores.ts";

/** What the worker asks of the server, each answered with a reply. */
type WorkerRequest =
  | { kind: "request"; system: string; messages: ChatMessage[]; events: ExecutionEventInput[] }
  | { kind: "tool"; answer: ChatMessage; callIndex: number; call: ToolCall; events: ExecutionEventInput[] }
  | { kind: "final"; text: string; events: ExecutionEventInput[] };
/** A reply carries the answer's JSON text, or why the server could not answer. */
type ToWorker = { type: "start"; task: string; prompt: string } | { type: "reply"; id: number; text: string } | { type: "reply"; id: number; error: string };
/** A call's body is JSON text, as a pooled worker's request body is; an exit with `failure` ends its Task Failed. */
type FromWorker = { type: "ready" } | { type: "call"; id: number; task: string; body: string } | { type: "exit"; task: string; failure?: string };

const SYSTEM_PROMPT = "x";
/** The model asked for: the timed model picks its script by this name (the fake model answers any name alike). */
const MODEL_NAME = NOOP_TOOL.name;

async function serve(modelURL: string): Promise<void> {
  const die = (why: string) => {
    console.error(`bare loop: ${why}`);
    process.exit(1);
  };
  const fail = (what: string) => (err: unknown) => die(`${what}: ${String(err)}`);
  const stores = openBareStores("bare-loop");
  const gate = new GroupCommit(stores.db, {
    commitFailed: fail("a commit failed"),
    sendFailed: (err) => console.error(`bare loop: a send failed: ${String(err)}`),
  });
  const runs = new Map<string, RunWrites>();
  const watchers = new Set<http.ServerResponse>();
  const worker = fork(fileURLToPath(import.meta.url), ["worker", modelURL], { execArgv: WORKER_NODE_FLAGS, stdio: ["ignore", "inherit", "inherit", "ipc"], serialization: "advanced" });
  // Without its worker no Task would end: the server ends, and with it the driver's watch.
  const workerGone = () => die("the worker process ended");
  worker.on("exit", workerGone);
  const toWorker = new BatchedSender<ToWorker>({ write: (batch, done) => worker.send(batch, done) });
  const send = (message: ToWorker) => gate.release(() => toWorker.push(message));
  const tellWatchers = (run: RunWrites, change = "MODIFIED") => {
    const frame = `event: ${change}\ndata: ${JSON.stringify(run.current)}\n\n`;
    gate.release(() => watchers.forEach((watcher) => watcher.write(frame)));
  };
  const ready = Promise.withResolvers<void>();

  async function answer(run: RunWrites, request: WorkerRequest): Promise<unknown> {
    if (request.kind === "request") return run.step("request", request.messages, { system: request.system }, request.events);
    if (request.kind === "final") return run.finalAnswer(request.text, request.events);
    const key = run.callStarted(request.answer, request.callIndex, request.events);
    // The call acts only once its start is committed, as the effect ledger has it.
    await gate.settled();
    // Through undici's request, as Orka's server calls an HTTP Tool.
    const response = await undici.request(`${modelURL}/noop`, { method: "POST", headers: { "content-type": "application/json" }, body: request.call.arguments });
    const result = await response.body.text();
    run.callFinished(key, request.call.id, result);
    return { result, journalled: true };
  }

  worker.on("message", (batch: FromWorker[]) => {
    for (const message of batch) {
      if (message.type === "ready") ready.resolve();
      else if (message.type === "exit") {
        const run = runs.get(message.task)!;
        runs.delete(message.task);
        run.end(message.failure).then(() => tellWatchers(run), fail(`${message.task} could not be ended`));
      } else {
        answer(runs.get(message.task)!, JSON.parse(message.body) as WorkerRequest).then(
          (reply) => send({ type: "reply", id: message.id, text: JSON.stringify(reply ?? {}) }),
          (err: Error) => send({ type: "reply", id: message.id, error: err.message }),
        );
      }
    }
  });

  const server = http.createServer((req, res) => {
    if (req.url === "/api/v1/watch/tasks") {
      res.writeHead(200, { "content-type": "text/event-stream" }).write(": connected\n\n");
      watchers.add(res);
      res.on("close", () => watchers.delete(res));
      return;
    }
    let body = "";
    req.on("data", (chunk) => (body += chunk));
    req.on("end", () => {
      const { name, prompt } = JSON.parse(body) as { name: string; prompt: string };
      RunWrites.create(stores, name, prompt).then((run) => {
        runs.set(name, run);
        const created = JSON.stringify(run.current);
        gate.release(() => res.writeHead(201, { "content-type": "application/json" }).end(created));
        tellWatchers(run, "ADDED");
        // As a reconcile pass queued by the create.
        setImmediate(() => run.start().then(() => {
          tellWatchers(run);
          send({ type: "start", task: name, prompt });
        }, fail(`${name} could not be started`)));
      }, (err: Error) => res.writeHead(500, { "content-type": "application/json" }).end(JSON.stringify({ error: { message: err.message } })));
    });
  });
  await listenAndAnnounce(server, ready.promise);
  process.on("SIGTERM", async () => {
    server.close();
    watchers.forEach((watcher) => watcher.destroy());
    worker.off("exit", workerGone);
    worker.kill();
    gate.commit();
    await stores.close();
    process.exit(0);
  });
}

function work(modelURL: string): void {
  const model = openAIModel({ apiKey: "bare", baseURL: `${modelURL}/v1`, timeoutMs: 60_000 });
  const toServer = new BatchedSender<FromWorker>({ write: (batch, done) => process.send!(batch, done) });
  const waiting = new Map<number, PromiseWithResolvers<string>>();
  let lastId = 0;
  const ask = (task: string, request: WorkerRequest) => {
    const id = ++lastId;
    const reply = Promise.withResolvers<string>();
    waiting.set(id, reply);
    toServer.push({ type: "call", id, task, body: JSON.stringify(request) });
    return reply.promise;
  };

  async function run(task: string, prompt: string): Promise<void> {
    const messages: ChatMessage[] = [{ role: "user", content: prompt }];
    await ask(task, { kind: "request", system: SYSTEM_PROMPT, messages, events: [event("WorkerStarted", "attempt 1"), event("ModelRequestStarted", "turn 1")] });
    let sinceLastWrite: ExecutionEventInput[] = [];
    for (let turn = 1; ; turn++) {
      const reply = await model.complete({ model: MODEL_NAME, system: SYSTEM_PROMPT, messages, tools: [NOOP_TOOL], maxTokens: 1024 });
      if (reply.toolCalls.length === 0) {
        await ask(task, { kind: "final", text: reply.text, events: [...sinceLastWrite, event("ModelRequestCompleted", "0 tool calls"), event("ModelMessage", reply.text, reply.text), ...succeeded(reply.text)] });
        break;
      }
      const answer: ChatMessage = { role: "assistant", content: reply.text, toolCalls: reply.toolCalls };
      messages.push(answer);
      for (const [index, call] of reply.toolCalls.entries()) {
        const events = [...sinceLastWrite, event("ModelRequestCompleted", `${reply.toolCalls.length} tool calls`), event("ToolCallStarted", call.name, call.arguments)];
        const { result } = JSON.parse(await ask(task, { kind: "tool", answer, callIndex: turn * 100 + index, call, events })) as { result: string };
        messages.push({ role: "tool", toolCallId: call.id, name: call.name, content: result });
        sinceLastWrite = [event("ToolCallCompleted", `${call.name} returned ${result.length} characters`, result)];
      }
      sinceLastWrite.push(event("ModelRequestStarted", `turn ${turn + 1}`));
    }
    toServer.push({ type: "exit", task });
  }

  process.on("message", (batch: ToWorker[]) => {
    for (const message of batch) {
      if (message.type === "reply") {
        const reply = waiting.get(message.id);
        waiting.delete(message.id);
        if ("error" in message) reply?.reject(new Error(message.error));
        else reply?.resolve(message.text);
      } else {
        const { task } = message;
        run(task, message.prompt).catch((err: Error) => toServer.push({ type: "exit", task, failure: err.message }));
      }
    }
  });
  // Without its server there is nothing to do.
  process.on("disconnect", () => process.exit(0));
  toServer.push({ type: "ready" });
}

const [role, modelURL] = process.argv.slice(2);
if (role === "server" && modelURL) await serve(modelURL);
else if (role === "worker" && modelURL) work(modelURL);
else throw new Error("usage: node bench/bare-loop.ts server <model URL> | worker <model URL>");
