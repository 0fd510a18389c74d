// npm run bench: prints figures, asserts nothing.
// What a coding-agent session costs, beside its peers in the same run:
// - broker overhead per tool call: a CLI's MCP round trip for web_fetch of a local page (through the
//   session's broker, the control plane's per-call checks and the worker's executor), minus the same
//   web_fetch run directly by the executor (the tool body); beside it, a bare MCP round trip (the SDK's
//   client and server, a no-op tool, no checks), the floor of any broker;
// - session start: from the Task's creation to the CLI's process starting (admission, attempt, private
//   root, proxy, broker route, spawn), beside a bare `node` spawn of the same script.
// The CLI is the scripted stand-in (test/fixtures/fake-coding-cli.mjs), a real MCP client.
import { spawn } from "node:child_process";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { toolHarness } from "../test/helpers/tools.ts";
import { startBenchServer } from "./server.ts";
import { percentiles } from "./timing.ts";

const CALLS = Number(process.env.BENCH_BROKER_CALLS ?? 200);
const SESSIONS = Number(process.env.BENCH_SESSIONS ?? 10);
const FAKE_CLI = fileURLToPath(new URL("../test/fixtures/fake-coding-cli.mjs", import.meta.url));

const page = http.createServer((_request, response) => response.end("a small page"));
await new Promise<void>((resolve) => page.listen(0, "127.0.0.1", resolve));
const pageURL = `http://127.0.0.1:${(page.address() as AddressInfo).port}/`;

const orka = await startBenchServer("runtimes", {
  ORKA_ALLOW_LOOPBACK_EGRESS: "true",
  ORKA_RUNTIME_COMMAND_CLAUDE: JSON.stringify([process.execPath, FAKE_CLI]),
  // The stand-in CLI imports the MCP SDK from the repository's node_modules.
  ORKA_RUNTIME_READ_PATHS: fileURLToPath(new URL("../node_modules", import.meta.url)),
});
const { api } = orka;

await api("POST", "/secrets", { name: "llm-key", stringData: { "api-key": "sk-bench-0000000000000000" } });
// The stand-in CLI never calls the model; the Provider only has to be ready.
await api("POST", "/providers", { metadata: { name: "anthropic" }, spec: { type: "anthropic", baseURL: "http://127.0.0.1:9", secretRef: { name: "llm-key" } } });
await api("POST", "/agents", { metadata: { name: "coder" }, spec: { model: { provider: "anthropic", name: "bench-model" }, runtime: { type: "claude", defaultAllowedTools: ["web_fetch"] } } });

/** Runs one session to its end; answers the stand-in CLI's report and when the Task was created. */
async function session(name: string, script: Record<string, unknown>): Promise<{ createdAt: number; answer: any }> {
  const createdAt = Date.now();
  await api("POST", "/tasks", { metadata: { name }, spec: { type: "agent", agentRef: { name: "coder" }, prompt: JSON.stringify(script) } });
  for (const deadline = Date.now() + 120_000; ; await new Promise((done) => setTimeout(done, 20))) {
    const task = await api("GET", `/tasks/${name}`);
    if (task.status?.phase === "Succeeded") return { createdAt, answer: JSON.parse((await api("GET", `/tasks/${name}/result`)).result) };
    if (task.status?.phase === "Failed" || Date.now() > deadline) throw new Error(`session ${name}: ${task.status?.phase} ${task.status?.message}`);
  }
}

// Broker round trips, from inside the CLI.
const fetchCall = { tool: "web_fetch", arguments: { url: pageURL } };
const { answer } = await session("broker-calls", { calls: Array.from({ length: CALLS + 5 }, () => fetchCall) });
const roundTrips = answer.calls.slice(5).map((call: { ms: number }) => call.ms);

// The tool body: the same web_fetch through the worker's executor, in this process.
const harness = await toolHarness({ fetch: { egress: { allowLoopback: true }, timeoutMs: 5_000 } });
const bodies: number[] = [];
for (let i = 0; i < CALLS + 5; i++) {
  const started = performance.now();
  await harness.call("web_fetch", { url: pageURL });
  if (i >= 5) bodies.push(performance.now() - started);
}

// The floor: a bare MCP round trip (SDK client and stateless server, a no-op tool).
const bare = http.createServer(async (request, response) => {
  const server = new McpServer({ name: "bare", version: "1.0.0" });
  server.registerTool("noop", { description: "does nothing" }, async () => ({ content: [{ type: "text", text: "ok" }] }));
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  response.once("close", () => void server.close());
  await server.connect(transport);
  await transport.handleRequest(request, response);
});
await new Promise<void>((resolve) => bare.listen(0, "127.0.0.1", resolve));
const client = new Client({ name: "bench", version: "1.0.0" });
await client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${(bare.address() as AddressInfo).port}/`)));
const bareTimes: number[] = [];
for (let i = 0; i < CALLS + 5; i++) {
  const started = performance.now();
  await client.callTool({ name: "noop", arguments: {} });
  if (i >= 5) bareTimes.push(performance.now() - started);
}
await client.close();

const trip = percentiles(roundTrips);
const body = percentiles(bodies);
console.log(JSON.stringify({ bench: "broker web_fetch round trip (CLI → broker → checks → executor → CLI)", runs: roundTrips.length, ...trip }));
console.log(JSON.stringify({ bench: "web_fetch body (executor alone)", runs: bodies.length, ...body }));
console.log(JSON.stringify({ bench: "broker overhead per call (round trip − body)", p50_ms: +(trip.p50_ms - body.p50_ms).toFixed(3), p95_ms: +(trip.p95_ms - body.p95_ms).toFixed(3) }));
console.log(JSON.stringify({ bench: "peer: bare MCP SDK round trip, no-op tool", runs: bareTimes.length, ...percentiles(bareTimes) }));

// Session start: Task created → the CLI's process started; beside a bare spawn of the same script.
const starts: number[] = [];
for (let i = 0; i < SESSIONS; i++) {
  const { createdAt, answer: started } = await session(`start-${i}`, { print: "ready" });
  starts.push(started.startedAt - createdAt);
}
const spawns: number[] = [];
for (let i = 0; i < SESSIONS; i++) {
  const spawnedAt = performance.timeOrigin + performance.now();
  const output = await new Promise<string>((resolve) => {
    let text = "";
    const child = spawn(process.execPath, [FAKE_CLI, "-p", "{}"], { stdio: ["ignore", "pipe", "ignore"] });
    child.stdout.on("data", (chunk) => (text += chunk));
    child.on("close", () => resolve(text));
  });
  spawns.push(JSON.parse(JSON.parse(output).result).startedAt - spawnedAt);
}
console.log(JSON.stringify({ bench: "session start (Task created → CLI process started)", runs: starts.length, ...percentiles(starts) }));
console.log(JSON.stringify({ bench: "peer: bare node spawn of the same CLI (spawn → process started)", runs: spawns.length, ...percentiles(spawns) }));

await new Promise((resolve) => bare.close(resolve));
await new Promise((resolve) => page.close(resolve));
await orka.close();
