// The zero-latency fake model every system of the benchmark talks to (OpenAI chat completions):
// three `noop` tool calls, then "done". It also serves `POST /noop`, the tool as an HTTP endpoint for Orka
// (and for the in-process peers when their tool goes over HTTP; otherwise they run it as a function). `node bench/peers/fake-model.ts [answer delay ms]` serves it
// alone and prints `port <n>`; the benchmark also starts it in its own process to see when a Task's first
// request arrives. With a delay, each model answer (not the tool) leaves that long after its request came.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";

/** The tool the fake model asks for, as a model is offered it: Orka's custom HTTP Tool and the bare loop declare it so. */
export const NOOP_TOOL = { name: "noop", description: "no-op", parameters: { type: "object", properties: { n: { type: "number" } } } };

interface ChatMessage {
  role: string;
  content?: string | null;
}

/** Serves on 127.0.0.1; `onRequest` hears the user message of each request as it arrives. */
export async function startFakeModel(onRequest: (prompt: string) => void = () => {}, answerDelayMs = 0) {
  const server = http.createServer((req, res) => {
    let raw = "";
    req.on("data", (chunk) => (raw += chunk));
    req.on("end", () => {
      const body = JSON.parse(raw || "{}");
      if (req.url === "/noop") return void res.writeHead(200, { "content-type": "text/plain" }).end(`ok ${body.n}`);
      const messages: ChatMessage[] = body.messages ?? [];
      onRequest(String(messages.find((m) => m.role === "user")?.content ?? ""));
      const turn = messages.filter((m) => m.role === "assistant").length;
      const message = turn < 3
        ? { role: "assistant", content: null, tool_calls: [{ id: `call_${turn}`, type: "function", function: { name: "noop", arguments: JSON.stringify({ n: turn }) } }] }
        : { role: "assistant", content: "done" };
      const out = JSON.stringify({ id: "c", object: "chat.completion", created: 0, model: body.model, choices: [{ index: 0, message, finish_reason: turn < 3 ? "tool_calls" : "stop" }], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } });
      const answer = () => res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(out) }).end(out);
      if (answerDelayMs > 0) setTimeout(answer, answerDelayMs);
      else answer();
    });
  });
  await new Promise<void>((listening) => server.listen(0, "127.0.0.1", listening));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => new Promise<void>((closed) => server.close(() => closed())) };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const model = await startFakeModel(undefined, Number(process.argv[2] ?? 0));
  console.log(`port ${new URL(model.url).port}`);
}
