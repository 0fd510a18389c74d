// The floor under "create → first model request": the hops that path must make, with Orka's own pieces
// and no logic between them. `node bench/latency-floor.ts server <model URL>` serves it and prints
// `port <n>`; it forks itself as the worker (`… worker`). bench/floor.ts drives it.
// - The server (a bare node:http server, Orka's SQLite stores, one commit per transaction as a server
//   serving one Task at a time makes them): a POST /tasks is parsed and the Task created Pending with
//   its event (two commits; the writes of bench/run-writes.ts), answered 201; then the attempt is
//   recorded, the Task set Running and its event written (three commits), and the start sent to the worker over IPC.
// - The worker (a child process on the pool's IPC channel, the V8 serializer, messages in arrays as the
//   pool batches them): sends the first journal step (the request it is about to make) and waits for
//   the server to commit it with its events (one commit); then asks the model through Orka's OpenAI
//   client, as an attempt does.
// Nothing is checked, looked up, admitted or authorized, and nothing but the first request is made.
import { fork } from "node:child_process";
import http from "node:http";
import { fileURLToPath } from "node:url";
import { openAIModel } from "../src/providers/openai.ts";
import { listenAndAnnounce } from "./child-server.ts";
import { event, RunWrites } from "./run-writes.ts";
import { openBareStores } from "./stores.ts";

type ToWorker = { type: "start"; task: string; modelURL: string } | { type: "reply"; id: number };
type FromWorker = { type: "ready" } | { type: "call"; id: number; task: string; body: string };

/** A system prompt of the size of a real first request's journal step (about 900 bytes with the rest). */
const SYSTEM_PROMPT = "You are a benchmark agent. ".repeat(30);

async function serve(modelURL: string): Promise<void> {
  const stores = openBareStores("latency-floor");
  const runs = new Map<string, RunWrites>();
  const worker = fork(fileURLToPath(import.meta.url), ["worker"], { stdio: ["ignore", "inherit", "inherit", "ipc"], serialization: "advanced" });
  const toWorker = (message: ToWorker) => worker.send([message]);
  // A message sent while the worker's modules load would be dropped: the port is printed once it is ready.
  const ready = Promise.withResolvers<void>();

  worker.on("message", (batch: FromWorker[]) => {
    for (const call of batch) {
      if (call.type === "ready") {
        ready.resolve();
        continue;
      }
      const step = JSON.parse(call.body);
      runs.get(call.task)!.step("request", step.messages, { system: step.system }, [event("WorkerStarted", "attempt 1"), event("ModelRequestStarted", "turn 1")]);
      toWorker({ type: "reply", id: call.id });
    }
  });

  const server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (chunk) => (body += chunk));
    req.on("end", async () => {
      const { name, prompt } = JSON.parse(body);
      const run = await RunWrites.create(stores, name, prompt);
      runs.set(name, run);
      res.writeHead(201, { "content-type": "application/json" }).end(JSON.stringify(run.current));
      // As a reconcile pass queued by the create: the attempt known to the store before it starts.
      setImmediate(async () => {
        await run.start();
        toWorker({ type: "start", task: name, modelURL });
      });
    });
  });
  await listenAndAnnounce(server, ready.promise);
  process.on("SIGTERM", async () => {
    server.close();
    worker.kill();
    await stores.close();
    process.exit(0);
  });
}

function work(): void {
  const waiting = new Map<number, () => void>();
  let lastId = 0;
  let model: ReturnType<typeof openAIModel> | undefined;
  const journalled = (task: string, body: unknown) =>
    new Promise<void>((answered) => {
      const id = ++lastId;
      waiting.set(id, answered);
      process.send!([{ type: "call", id, task, body: JSON.stringify(body) } satisfies FromWorker]);
    });
  const start = async (task: string, modelURL: string) => {
    model ??= openAIModel({ apiKey: "floor", baseURL: `${modelURL}/v1`, timeoutMs: 60_000 });
    const messages = [{ role: "user" as const, content: task }];
    await journalled(task, { system: SYSTEM_PROMPT, messages });
    await model.complete({ model: "floor", system: SYSTEM_PROMPT, messages, tools: [], maxTokens: 1024 });
  };
  process.on("message", (batch: ToWorker[]) => {
    for (const message of batch) {
      if (message.type === "reply") {
        waiting.get(message.id)?.();
        waiting.delete(message.id);
      }
      else void start(message.task, message.modelURL).catch((err: Error) => console.error(`latency floor worker: ${err.message}`));
    }
  });
  // Without its server there is nothing to do.
  process.on("disconnect", () => process.exit(0));
  process.send!([{ type: "ready" } satisfies FromWorker]);
}

const [role, modelURL] = process.argv.slice(2);
if (role === "server" && modelURL) await serve(modelURL);
else if (role === "worker") work();
else throw new Error("usage: node bench/latency-floor.ts server <model URL> | worker");
