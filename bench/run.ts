// npm run bench: prints figures, asserts nothing.
//  1. Task create → first model request (ms), through the API of an embedded server.
//  2. Runs/s of the 3-tool-call loop of ../shared/peer-bench (same zero-latency fake model),
//     end to end through the API (create → Succeeded, every step durable), beside the in-process
//     peers of that directory when it is present.
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { serverConfigFrom } from "../src/config.ts";
import { startOrka } from "../src/server.ts";

const RUNS = Number(process.env.BENCH_RUNS ?? 200);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 8);
const LATENCY_SAMPLES = Number(process.env.BENCH_LATENCY_SAMPLES ?? 30);

/** The peer-bench fake model: three `noop` tool calls, then "done"; notes when each request arrives. */
async function fakeModel(onRequest: (prompt: string) => void) {
  const server = http.createServer((req, res) => {
    let raw = "";
    req.on("data", (c) => (raw += c));
    req.on("end", () => {
      const body = JSON.parse(raw || "{}");
      const messages: { role: string; content?: string }[] = body.messages ?? [];
      onRequest(String(messages.find((m) => m.role === "user")?.content ?? ""));
      const turn = messages.filter((m) => m.role === "assistant").length;
      const message = turn < 3
        ? { role: "assistant", content: null, tool_calls: [{ id: `call_${turn}`, type: "function", function: { name: "noop", arguments: JSON.stringify({ n: turn }) } }] }
        : { role: "assistant", content: "done" };
      const out = JSON.stringify({ id: "c", object: "chat.completion", created: 0, model: body.model, choices: [{ index: 0, message, finish_reason: turn < 3 ? "tool_calls" : "stop" }], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } });
      res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(out) }).end(out);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => server.close() };
}

async function noopTool() {
  const server = http.createServer((req, res) => {
    let raw = "";
    req.on("data", (c) => (raw += c));
    req.on("end", () => res.writeHead(200, { "content-type": "text/plain" }).end(`ok ${JSON.parse(raw || "{}").n}`));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => server.close() };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const p95 = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length * 0.95)];

const firstRequest = new Map<string, number>();
const model = await fakeModel((prompt) => {
  if (!firstRequest.has(prompt)) firstRequest.set(prompt, performance.now());
});
const tool = await noopTool();
const dir = mkdtempSync(join(tmpdir(), "orka-bench-"));
const orka = await startOrka({
  ...serverConfigFrom({ ORKA_PORT: "0", ORKA_DATA_DIR: dir, ORKA_ADMIN_TOKEN: "bench-admin-token-0000", ORKA_LOG_LEVEL: "silent", ORKA_ALLOW_LOOPBACK_EGRESS: "true" }, dir),
  workerSlots: Math.max(CONCURRENCY, 4),
  cliConfigPath: "",
});
const api = async (method: string, path: string, body?: unknown): Promise<any> => {
  const response = await fetch(`${orka.url}/api/v1/${path}`, {
    method,
    headers: { authorization: "Bearer bench-admin-token-0000", "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = await response.json();
  if (!response.ok) throw new Error(JSON.stringify(json));
  return json;
};
await api("POST", "secrets", { name: "key", stringData: { "api-key": "k" } });
await api("POST", "providers", { metadata: { name: "fake" }, spec: { type: "openai", baseURL: `${model.url}/v1`, secretRef: { name: "key" }, defaultModel: "fake" } });
await api("POST", "tools", { metadata: { name: "noop" }, spec: { description: "no-op", parameters: { type: "object", properties: { n: { type: "number" } } }, http: { url: `${tool.url}/noop` } } });
await api("POST", "agents", { metadata: { name: "bench" }, spec: { providerRef: { name: "fake" }, systemPrompt: { inline: "x" }, tools: [{ name: "noop" }] } });

/** Creates a Task and follows its event stream to the end (no polling). */
async function runTask(name: string): Promise<void> {
  await api("POST", "tasks", { name, type: "ai", agentRef: "bench", prompt: name });
  const response = await fetch(`${orka.url}/api/v1/tasks/${name}/stream`, { headers: { authorization: "Bearer bench-admin-token-0000" } });
  const text = await response.text();
  const end = /event: stream_complete\ndata: (.*)\n/.exec(text);
  const phase = end ? JSON.parse(end[1]).type : "unknown";
  if (phase !== "Succeeded") throw new Error(`${name}: ${phase}`);
}

// 1. create → first model request, one Task at a time.
const latencies: number[] = [];
for (let i = 0; i < LATENCY_SAMPLES; i++) {
  const name = `latency-${i}`;
  const created = performance.now();
  await runTask(name);
  latencies.push(firstRequest.get(name)! - created);
}
console.log(JSON.stringify({ bench: "task create → first model request", samples: LATENCY_SAMPLES, p50_ms: +median(latencies).toFixed(1), p95_ms: +p95(latencies).toFixed(1) }));

// 2. the 3-tool-call loop, end to end through the API.
let started = 0;
const t0 = performance.now();
await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
  while (started < RUNS) await runTask(`loop-${started++}`);
}));
const ms = performance.now() - t0;
console.log(JSON.stringify({ peer: "orka (API create → Succeeded, durable)", runs: RUNS, concurrency: CONCURRENCY, ms_per_run: +(ms / RUNS).toFixed(3), runs_per_s: +((RUNS / ms) * 1000).toFixed(1), server_rss_mb: Math.round(process.memoryUsage().rss / 1e6) }));

await orka.close();
model.close();
tool.close();
rmSync(dir, { recursive: true, force: true });

const peerBench = resolve(import.meta.dirname, "../../shared/peer-bench/run.sh");
if (existsSync(peerBench) && process.env.BENCH_SKIP_PEERS !== "1") {
  try {
    process.stdout.write(execFileSync("bash", [peerBench, String(RUNS), String(CONCURRENCY)], { encoding: "utf8", timeout: 600_000 }));
  } catch (err) {
    console.log(JSON.stringify({ peers: "not run", reason: (err as Error).message.split("\n")[0] }));
  }
} else {
  console.log(JSON.stringify({ peers: "not run", reason: `${peerBench} not found (or BENCH_SKIP_PEERS=1)` }));
}
