// A local model server speaking the OpenAI Chat Completions, OpenAI Responses and Anthropic Messages
// wire formats (JSON and streaming, with tool calls), so Orka's real providers and the real coding CLIs
// can be tested through their own clients.
import http from "node:http";
import type { AddressInfo } from "node:net";

export interface PeerTurn {
  text?: string;
  /**
   * `rawArguments` is sent verbatim: the arguments text (OpenAI) or the input's JSON (Anthropic), to
   * play a model that writes broken JSON, or JSON nested deeper than JSON.stringify can write.
   */
  toolCalls?: { name: string; arguments: Record<string, unknown>; rawArguments?: string }[];
  /** Stop reason to report instead of the natural one ("length", "content_filter", "refusal", ...). */
  finish?: string;
  /** Answer with this HTTP reply instead of a model response, as a misconfigured proxy would. */
  raw?: { status?: number; contentType: string; body: string };
  /** Never answer: the request hangs until the client gives up or the peer closes. */
  hang?: boolean;
}

/** A turn, or a function of the request that gives it (and may first act, e.g. change another peer's state). */
export type ScriptedPeerTurn = PeerTurn | ((request: Record<string, unknown>) => PeerTurn | Promise<PeerTurn>);

/** The text of every tool result in a request, in order, whichever wire format it came in. */
export function toolResultsOf(body: Record<string, unknown>): string[] {
  if (Array.isArray(body.input)) {
    return (body.input as { type?: string; output?: unknown }[]).filter((item) => item.type === "function_call_output").map((item) => contentText(item.output));
  }
  const messages = (body.messages as { role: string; content: unknown }[]) ?? [];
  return messages.flatMap((m) => {
    if (m.role === "tool") return [contentText(m.content)];
    if (m.role === "user" && Array.isArray(m.content)) {
      return m.content.filter((b: { type: string }) => b.type === "tool_result").map((b: { content: unknown }) => contentText(b.content));
    }
    return [];
  });
}

/** A tool result's text: a string, or the text of its content blocks (as MCP tool results come back). */
function contentText(content: unknown): string {
  if (!Array.isArray(content)) return String(content);
  return content.map((block: { text?: unknown }) => (typeof block.text === "string" ? block.text : JSON.stringify(block))).join("");
}

export interface RecordedRequest {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: Record<string, unknown>;
  /** Requests being answered when this one arrived, itself included. */
  concurrent: number;
}

export interface InjectedFailure {
  status: number;
  message?: string;
  retryAfterSeconds?: number;
  /** Quote the credential the request carried in the message, as real providers do on a 401. */
  echoCredential?: boolean;
}

/** Close the connection without a reply, as a crashed proxy or a reset network does. */
export interface InjectedReset {
  destroySocket: true;
}

export interface LlmPeer {
  url: string;
  requests: RecordedRequest[];
  /**
   * Turns for a model name; the n-th request of a conversation gets turn n (n = assistant turns so
   * far). A turn may be a function of the request, to answer from earlier tool results.
   */
  script(model: string, turns: ScriptedPeerTurn[]): void;
  /** The next `count` requests (for any model, or one model) fail with this status, or lose their connection. */
  failNext(count: number, failure: InjectedFailure | InjectedReset, model?: string): void;
  /** Responses wait this long first (for one model, or for all). */
  setDelay(ms: number, model?: string): void;
  close(): Promise<void>;
}

type Format = "openai" | "responses" | "anthropic";

export async function startLlmPeer(): Promise<LlmPeer> {
  const scripts = new Map<string, ScriptedPeerTurn[]>();
  const failures: { model?: string; failure: InjectedFailure | InjectedReset }[] = [];
  const requests: RecordedRequest[] = [];
  const delays = new Map<string | undefined, number>();
  let answering = 0;

  const server = http.createServer((req, res) => {
    answering++;
    res.once("close", () => answering--);
    let raw = "";
    req.on("data", (chunk) => (raw += chunk));
    req.on("end", async () => {
      const path = (req.url ?? "").split("?")[0];
      let body: Record<string, unknown> = {};
      try {
        body = raw ? JSON.parse(raw) : {};
      } catch {
        return sendJson(res, 400, { error: { message: "invalid JSON body", type: "invalid_request_error" } });
      }
      requests.push({ path, headers: req.headers, body, concurrent: answering });
      const delayMs = delays.get(String(body.model ?? "")) ?? delays.get(undefined) ?? 0;
      if (delayMs > 0) await new Promise((r) => setTimeout(r, delayMs));
      const format = formatOf(path);
      if (!format) return sendJson(res, 404, { error: { message: `no route ${path}` } });
      const model = String(body.model ?? "");
      const failureIndex = failures.findIndex((f) => f.model === undefined || f.model === model);
      if (failureIndex >= 0) {
        const [{ failure }] = failures.splice(failureIndex, 1);
        if ("destroySocket" in failure) return void req.socket.destroy();
        const credential = req.headers.authorization ?? req.headers["x-api-key"];
        return sendFailure(res, format, failure.echoCredential ? { ...failure, message: `Incorrect API key provided: ${credential}` } : failure);
      }
      const turns = scripts.get(model);
      const index = assistantTurnsIn(format, body);
      const scripted = turns?.[index];
      let turn: PeerTurn | undefined;
      try {
        turn = typeof scripted === "function" ? await scripted(body) : scripted;
      } catch (err) {
        // A 400 is not retried, so a failing turn is played once and the test sees why.
        return sendFailure(res, format, { status: 400, message: `scripted turn ${index + 1} for model "${model}" failed: ${err instanceof Error ? err.message : String(err)}` });
      }
      if (!turn) return sendFailure(res, format, { status: 400, message: `peer has no turn ${index + 1} for model "${model}"` });
      if (turn.hang) return;
      if (turn.raw) return void res.writeHead(turn.raw.status ?? 200, { "content-type": turn.raw.contentType }).end(turn.raw.body);
      const stream = body.stream === true;
      if (format === "openai") return stream ? streamOpenAI(res, model, turn, index) : sendJson(res, 200, openAIBody(model, turn, index));
      if (format === "responses") {
        const namespaces = namespacesOf(body);
        return stream ? streamResponses(res, model, turn, index, namespaces) : sendJson(res, 200, responsesBody(model, turn, index, namespaces));
      }
      return stream ? streamAnthropic(res, model, turn, index) : sendJsonText(res, 200, anthropicBodyText(model, turn, index));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    script: (model, turns) => void scripts.set(model, turns),
    failNext: (count, failure, model) => {
      for (let i = 0; i < count; i++) failures.push({ model, failure });
    },
    setDelay: (ms, model) => void delays.set(model, ms),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function formatOf(path: string): Format | undefined {
  if (path.endsWith("/chat/completions")) return "openai";
  if (path.endsWith("/responses")) return "responses";
  if (path.endsWith("/messages")) return "anthropic";
  return undefined;
}

/**
 * How many times the model has answered in this conversation. The Responses API has no assistant
 * message per turn: one turn is a run of model items (message, function_call, reasoning) in `input`.
 */
function assistantTurnsIn(format: Format, body: Record<string, unknown>): number {
  if (format !== "responses") return ((body.messages as { role: string }[] | undefined) ?? []).filter((m) => m.role === "assistant").length;
  const items = Array.isArray(body.input) ? (body.input as { type?: string; role?: string }[]) : [];
  const byModel = (item: { type?: string; role?: string }) => item.type === "function_call" || item.type === "reasoning" || (item.type === "message" && item.role === "assistant") || (item.type === undefined && item.role === "assistant");
  return items.filter((item, i) => byModel(item) && (i === 0 || !byModel(items[i - 1]))).length;
}

function sendJson(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  sendJsonText(res, status, JSON.stringify(body), headers);
}

function sendJsonText(res: http.ServerResponse, status: number, text: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text), ...headers });
  res.end(text);
}

function sendFailure(res: http.ServerResponse, format: Format, failure: InjectedFailure): void {
  const message = failure.message ?? `injected HTTP ${failure.status}`;
  const headers: Record<string, string> = failure.retryAfterSeconds !== undefined ? { "retry-after": String(failure.retryAfterSeconds) } : {};
  if (format !== "anthropic") return sendJson(res, failure.status, { error: { message, type: "server_error", code: null } }, headers);
  const type = failure.status === 429 ? "rate_limit_error" : failure.status === 529 ? "overloaded_error" : failure.status >= 500 ? "api_error" : "invalid_request_error";
  sendJson(res, failure.status, { type: "error", error: { type, message } }, headers);
}

const callId = (index: number, i: number) => `call_${index + 1}_${i + 1}`;

function openAIBody(model: string, turn: PeerTurn, index: number) {
  const toolCalls = (turn.toolCalls ?? []).map((c, i) => ({ id: callId(index, i), type: "function", function: { name: c.name, arguments: c.rawArguments ?? JSON.stringify(c.arguments) } }));
  return {
    id: `chatcmpl-${index}`,
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [
      {
        index: 0,
        message: { role: "assistant", content: turn.text ?? null, ...(toolCalls.length ? { tool_calls: toolCalls } : {}), refusal: null },
        finish_reason: turn.finish ?? (toolCalls.length ? "tool_calls" : "stop"),
        logprobs: null,
      },
    ],
    usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
  };
}

function streamOpenAI(res: http.ServerResponse, model: string, turn: PeerTurn, index: number): void {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  const base = { id: `chatcmpl-${index}`, object: "chat.completion.chunk", created: Math.floor(Date.now() / 1000), model };
  const chunk = (delta: unknown, finish: string | null = null) =>
    res.write(`data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }] })}\n\n`);
  chunk({ role: "assistant", content: "" });
  for (const piece of splitText(turn.text ?? "")) chunk({ content: piece });
  (turn.toolCalls ?? []).forEach((call, i) => {
    chunk({ tool_calls: [{ index: i, id: callId(index, i), type: "function", function: { name: call.name, arguments: "" } }] });
    chunk({ tool_calls: [{ index: i, function: { arguments: JSON.stringify(call.arguments) } }] });
  });
  chunk({}, turn.finish ?? (turn.toolCalls?.length ? "tool_calls" : "stop"));
  res.end("data: [DONE]\n\n");
}

/** The tool namespaces a Responses request declares (codex offers an MCP server's tools as namespace `mcp__<server>`). */
function namespacesOf(body: Record<string, unknown>): string[] {
  const tools = Array.isArray(body.tools) ? (body.tools as { type?: string; name?: string }[]) : [];
  return tools.flatMap((t) => (t.type === "namespace" && t.name ? [t.name] : []));
}

/**
 * The output items of a Responses API answer: the message, then one function_call per tool call. A
 * call named `<namespace>__<tool>` for a namespace the request declares is sent as that namespace's
 * tool, so a test scripts `mcp__orka__web_search` alike for every wire.
 */
function responsesOutput(turn: PeerTurn, index: number, namespaces: string[]) {
  const output: Record<string, unknown>[] = [];
  if (turn.text) output.push({ type: "message", id: `msg_${index + 1}`, role: "assistant", status: "completed", content: [{ type: "output_text", text: turn.text, annotations: [] }] });
  (turn.toolCalls ?? []).forEach((c, i) => {
    const namespace = namespaces.find((ns) => c.name.startsWith(`${ns}__`));
    const name = namespace ? { namespace, name: c.name.slice(namespace.length + 2) } : { name: c.name };
    output.push({ type: "function_call", id: `fc_${callId(index, i)}`, call_id: callId(index, i), ...name, arguments: c.rawArguments ?? JSON.stringify(c.arguments), status: "completed" });
  });
  return output;
}

function responsesBody(model: string, turn: PeerTurn, index: number, namespaces: string[], status = "completed") {
  return {
    id: `resp_${index + 1}`,
    object: "response",
    created_at: Math.floor(Date.now() / 1000),
    status,
    model,
    output: status === "completed" ? responsesOutput(turn, index, namespaces) : [],
    usage: { input_tokens: 10, input_tokens_details: { cached_tokens: 0 }, output_tokens: 5, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 15 },
  };
}

function streamResponses(res: http.ServerResponse, model: string, turn: PeerTurn, index: number, namespaces: string[]): void {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  let sequence = 0;
  const send = (event: string, data: Record<string, unknown>) => res.write(`event: ${event}\ndata: ${JSON.stringify({ type: event, sequence_number: sequence++, ...data })}\n\n`);
  send("response.created", { response: responsesBody(model, turn, index, namespaces, "in_progress") });
  responsesOutput(turn, index, namespaces).forEach((item, outputIndex) => {
    if (item.type === "message") {
      send("response.output_item.added", { output_index: outputIndex, item: { ...item, status: "in_progress", content: [] } });
      for (const delta of splitText(turn.text ?? "")) send("response.output_text.delta", { item_id: item.id, output_index: outputIndex, content_index: 0, delta });
    } else {
      send("response.output_item.added", { output_index: outputIndex, item: { ...item, status: "in_progress", arguments: "" } });
      send("response.function_call_arguments.delta", { item_id: item.id, output_index: outputIndex, delta: item.arguments });
    }
    send("response.output_item.done", { output_index: outputIndex, item });
  });
  send("response.completed", { response: responsesBody(model, turn, index, namespaces) });
  res.end();
}

function anthropicStop(turn: PeerTurn): string {
  return turn.finish ?? (turn.toolCalls?.length ? "tool_use" : "end_turn");
}

const rawInputMark = (i: number) => `__peer_raw_input_${i}__`;

/** The message as JSON text, each tool call's `rawArguments` spliced in as its input. */
function anthropicBodyText(model: string, turn: PeerTurn, index: number): string {
  const calls = turn.toolCalls ?? [];
  let text = JSON.stringify(anthropicBody(model, turn, index));
  calls.forEach((c, i) => {
    if (c.rawArguments !== undefined) text = text.replace(JSON.stringify(rawInputMark(i)), () => c.rawArguments!);
  });
  return text;
}

function anthropicBody(model: string, turn: PeerTurn, index: number) {
  const content: unknown[] = [];
  if (turn.text) content.push({ type: "text", text: turn.text });
  (turn.toolCalls ?? []).forEach((c, i) =>
    content.push({ type: "tool_use", id: `toolu_${callId(index, i)}`, name: c.name, input: c.rawArguments === undefined ? c.arguments : rawInputMark(i) }),
  );
  return {
    id: `msg_${index}`,
    type: "message",
    role: "assistant",
    model,
    content,
    stop_reason: anthropicStop(turn),
    stop_sequence: null,
    usage: { input_tokens: 10, output_tokens: 5 },
  };
}

function streamAnthropic(res: http.ServerResponse, model: string, turn: PeerTurn, index: number): void {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  const send = (event: string, data: Record<string, unknown>) => res.write(`event: ${event}\ndata: ${JSON.stringify({ type: event, ...data })}\n\n`);
  send("message_start", {
    message: { id: `msg_${index}`, type: "message", role: "assistant", model, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 10, output_tokens: 0 } },
  });
  let block = 0;
  if (turn.text) {
    send("content_block_start", { index: block, content_block: { type: "text", text: "" } });
    for (const piece of splitText(turn.text)) send("content_block_delta", { index: block, delta: { type: "text_delta", text: piece } });
    send("content_block_stop", { index: block++ });
  }
  (turn.toolCalls ?? []).forEach((call, i) => {
    send("content_block_start", { index: block, content_block: { type: "tool_use", id: `toolu_${callId(index, i)}`, name: call.name, input: {} } });
    send("content_block_delta", { index: block, delta: { type: "input_json_delta", partial_json: JSON.stringify(call.arguments) } });
    send("content_block_stop", { index: block++ });
  });
  send("message_delta", { delta: { stop_reason: anthropicStop(turn), stop_sequence: null }, usage: { output_tokens: 5 } });
  send("message_stop", {});
  res.end();
}

function splitText(text: string): string[] {
  return text.match(/.{1,8}/gs) ?? [];
}
