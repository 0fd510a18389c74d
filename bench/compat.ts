// npm run bench: prints figures, asserts nothing.
// The OpenAI-compatible endpoint of an embedded server against the LLM peer (zero latency):
//  1. a request with one server-side tool call (file_write), then the answer;
//  2. a pass-through request (X-Orka-Tools: disabled): one model call, no tools run.
// Requests go one at a time, so each figure is the latency one client sees.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { serverConfigFrom } from "../src/config.ts";
import { startOrka } from "../src/server.ts";
import { startLlmPeer } from "../test/peers/llm-server.ts";
import { measure } from "./timing.ts";

const RUNS = Number(process.env.BENCH_COMPAT_RUNS ?? 300);
const WARMUP = 30;
const ADMIN_TOKEN = "bench-admin-token-0000";

const peer = await startLlmPeer();
peer.script("tools", [{ toolCalls: [{ name: "file_write", arguments: { path: "note.txt", content: "x" } }] }, { text: "done" }]);
peer.script("plain", [{ text: "done" }]);
const dir = mkdtempSync(join(tmpdir(), "orka-bench-compat-"));
const orka = await startOrka({
  ...serverConfigFrom({ ORKA_PORT: "0", ORKA_DATA_DIR: join(dir, "state"), ORKA_WORK_DIR: join(dir, "work"), ORKA_ADMIN_TOKEN: ADMIN_TOKEN, ORKA_LOG_LEVEL: "silent" }, dir),
  cliConfigPath: "",
});

async function post(path: string, body: unknown, headers: Record<string, string> = {}): Promise<any> {
  const response = await fetch(`${orka.url}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
  const json = await response.json();
  if (!response.ok) throw new Error(`${path}: HTTP ${response.status} ${JSON.stringify(json)}`);
  return json;
}

await post("/api/v1/secrets", { name: "key", stringData: { "api-key": "sk-bench-0000000000000000" } });
await post("/api/v1/providers", { metadata: { name: "default" }, spec: { type: "openai", baseURL: `${peer.url}/v1`, secretRef: { name: "key" }, defaultModel: "plain" } });

const chat = (model: string, headers: Record<string, string> = {}) => async () => {
  const answer = await post("/openai/v1/chat/completions", { model, messages: [{ role: "user", content: "go" }] }, headers);
  if (answer.choices[0].message.content !== "done") throw new Error(`unexpected answer: ${JSON.stringify(answer)}`);
};

try {
  await measure("compat request, one server-side tool call (file_write)", RUNS, chat("tools"), WARMUP);
  await measure("compat pass-through request (X-Orka-Tools: disabled)", RUNS, chat("plain", { "x-orka-tools": "disabled" }), WARMUP);
} finally {
  await orka.close();
  await peer.close();
  rmSync(dir, { recursive: true, force: true });
}
