// Delegate + wait round trip: how soon a coordinator's wait_for_tasks returns after its child ends
// (child completionTime → the coordinator's next model request). Prints p50/p95; asserts nothing.
import { mkdtempSync, rmSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { serverConfigFrom } from "../src/config.ts";
import { startOrka } from "../src/server.ts";

const RUNS = Number(process.env.BENCH_COORDINATION_RUNS ?? 20);
const wakes = new Map<string, number>();

/** A coordinator that delegates, waits, and answers; a child that answers at once. */
const model = http.createServer((req, res) => {
  let raw = "";
  req.on("data", (c) => (raw += c));
  req.on("end", () => {
    const body = JSON.parse(raw);
    const messages: { role: string; content?: string }[] = body.messages;
    const prompt = messages.find((m) => m.role === "user")?.content ?? "";
    const turn = messages.filter((m) => m.role === "assistant").length;
    const tools = messages.filter((m) => m.role === "tool").map((m) => m.content ?? "");
    let message: Record<string, unknown> = { role: "assistant", content: "done" };
    if (body.model === "boss" && turn === 0) message = call("delegate_task", { agent: "child", prompt: `child of ${prompt}` });
    if (body.model === "boss" && turn === 1) message = call("wait_for_tasks", { tasks: [JSON.parse(tools[0]).taskName] });
    if (body.model === "boss" && turn === 2) wakes.set(prompt, Date.now());
    const out = JSON.stringify({ id: "c", object: "chat.completion", created: 0, model: body.model, choices: [{ index: 0, message, finish_reason: message.tool_calls ? "tool_calls" : "stop" }], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } });
    res.writeHead(200, { "content-type": "application/json" }).end(out);
  });
});
const call = (name: string, args: unknown) => ({ role: "assistant", content: null, tool_calls: [{ id: `c-${name}`, type: "function", function: { name, arguments: JSON.stringify(args) } }] });
await new Promise<void>((r) => model.listen(0, "127.0.0.1", r));
const modelURL = `http://127.0.0.1:${(model.address() as AddressInfo).port}/v1`;

const dir = mkdtempSync(join(tmpdir(), "orka-bench-coord-"));
const token = "bench-admin-token-0000";
const orka = await startOrka({ ...serverConfigFrom({ ORKA_PORT: "0", ORKA_DATA_DIR: dir, ORKA_ADMIN_TOKEN: token, ORKA_LOG_LEVEL: "silent" }, dir), cliConfigPath: "" });
const api = async (method: string, path: string, body?: unknown): Promise<any> =>
  (await fetch(`${orka.url}/api/v1/${path}`, { method, headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body) })).json();
await api("POST", "secrets", { name: "key", stringData: { "api-key": "k" } });
await api("POST", "providers", { metadata: { name: "fake" }, spec: { type: "openai", baseURL: modelURL, secretRef: { name: "key" } } });
await api("POST", "agents", { metadata: { name: "boss" }, spec: { providerRef: { name: "fake" }, model: { name: "boss" }, coordination: { enabled: true, allowedAgents: [{ name: "child" }] } } });
await api("POST", "agents", { metadata: { name: "child" }, spec: { providerRef: { name: "fake" }, model: { name: "child" } } });

const delays: number[] = [];
for (let i = 0; i < RUNS; i++) {
  const name = `boss-${i}`;
  await api("POST", "tasks", { name, type: "ai", agentRef: "boss", prompt: name });
  let task: any;
  do {
    await new Promise((r) => setTimeout(r, 20));
    task = await api("GET", `tasks/${name}`);
  } while (!["Succeeded", "Failed"].includes(task.status?.phase));
  const child = (await api("GET", `tasks/${name}/children`)).items[0];
  delays.push(wakes.get(name)! - Date.parse(child.status.completionTime));
}
delays.sort((a, b) => a - b);
console.log(JSON.stringify({ bench: "delegate + wait: child end → coordinator wakes", runs: RUNS, p50_ms: delays[Math.floor(RUNS / 2)], p95_ms: delays[Math.floor(RUNS * 0.95)] }));
await orka.close();
model.close();
rmSync(dir, { recursive: true, force: true });
