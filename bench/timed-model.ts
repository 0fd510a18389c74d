// A scripted fake model (OpenAI chat completions) that notes, on its own clock, when each model request
// arrives and when its answer has left, and the same for calls of its HTTP tool: the gaps between them
// are what an agent loop adds between two model turns. Times are wall-clock milliseconds with a fraction,
// so that another process on the machine can compare them with its own. The script is chosen by the requested model name:
// - a tool's name (`noop`, `recall_memory`): three calls of that tool, then "done";
// - `delegate`: delegate_task to the Agent `child`, then wait_for_tasks on that child, then "done";
// - anything else: "done" at once.
// `POST /noop` is the HTTP tool (`{n, conversation}` → `ok <n>`), where the fake model of bench/peers/ serves it too; `GET /log` answers what was noted
// since the last `GET /log`. `node bench/timed-model.ts` serves it and prints `port <n>`.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";

/** One model turn or one tool call, as the model's server saw it (milliseconds since the epoch, to a fraction). */
export interface Noted {
  kind: "model" | "tool";
  /** The Task's prompt (the first user message), or the tool call's `conversation` argument. */
  conversation: string;
  model?: string;
  /** The model turn (assistant messages before this request), or the tool call's `n`. */
  turn: number;
  arrivedAt: number;
  answeredAt: number;
}

interface ChatMessage {
  role: string;
  content?: string | null;
}

const TOOL_ARGUMENTS: Record<string, (turn: number, conversation: string) => unknown> = {
  noop: (turn, conversation) => ({ n: turn, conversation }),
  recall_memory: () => ({ query: "bench" }),
};

/** The child a delegating parent names in its prompt, so that the child's turns can be matched to it. */
export const childPrompt = (parentPrompt: string) => `[child of ${parentPrompt}]`;

const toolCall = (turn: number, name: string, args: unknown) => ({
  role: "assistant",
  content: null,
  tool_calls: [{ id: `call_${turn}`, type: "function", function: { name, arguments: JSON.stringify(args) } }],
});

function answer(model: string, messages: ChatMessage[], conversation: string): Record<string, unknown> {
  const turn = messages.filter((m) => m.role === "assistant").length;
  const toolArguments = TOOL_ARGUMENTS[model];
  if (toolArguments && turn < 3) return toolCall(turn, model, toolArguments(turn, conversation));
  if (model === "delegate" && turn === 0) return toolCall(turn, "delegate_task", { agent: "child", prompt: childPrompt(conversation) });
  if (model === "delegate" && turn === 1) {
    const delegated = JSON.parse(messages.findLast((m) => m.role === "tool")?.content ?? "{}");
    return toolCall(turn, "wait_for_tasks", { tasks: [delegated.taskName] });
  }
  return { role: "assistant", content: "done" };
}

export async function startTimedModel() {
  let noted: Noted[] = [];
  const wallClock = () => performance.timeOrigin + performance.now();
  const server = http.createServer((req, res) => {
    const arrivedAt = wallClock();
    let raw = "";
    req.on("data", (chunk) => (raw += chunk));
    req.on("end", () => {
      if (req.url === "/log") {
        const out = JSON.stringify(noted);
        noted = [];
        return void res.writeHead(200, { "content-type": "application/json" }).end(out);
      }
      const body = JSON.parse(raw || "{}");
      let note: Omit<Noted, "answeredAt">;
      let out: string;
      if (req.url === "/noop") {
        note = { kind: "tool", conversation: String(body.conversation), turn: Number(body.n), arrivedAt };
        out = `ok ${body.n}`;
      } else {
        const messages: ChatMessage[] = body.messages ?? [];
        const conversation = String(messages.find((m) => m.role === "user")?.content ?? "");
        const message = answer(body.model, messages, conversation);
        note = { kind: "model", conversation, model: body.model, turn: messages.filter((m) => m.role === "assistant").length, arrivedAt };
        out = JSON.stringify({ id: "c", object: "chat.completion", created: 0, model: body.model, choices: [{ index: 0, message, finish_reason: message.tool_calls ? "tool_calls" : "stop" }], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } });
      }
      res.once("finish", () => noted.push({ ...note, answeredAt: wallClock() }));
      res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(out) }).end(out);
    });
  });
  await new Promise<void>((listening) => server.listen(0, "127.0.0.1", listening));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => new Promise<void>((closed) => server.close(() => closed())) };
}

/** What the timed model in another process noted since the last call. */
export async function takeNoted(modelURL: string): Promise<Noted[]> {
  return (await fetch(`${modelURL}/log`)).json() as Promise<Noted[]>;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const model = await startTimedModel();
  console.log(`port ${new URL(model.url).port}`);
}
