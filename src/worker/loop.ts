import { ToolRejected, type JournalledCall, type ToolCallContext } from "./tool-call.ts";
import type { LoopResume } from "./journal.ts";
import { type ChatMessage, type ModelClient, type ModelResponse, type ToolCall, type ToolDefinition, ModelApiError, toolMessage } from "../providers/model.ts";
import type { ExecutionEventInput } from "../store/data-store.ts";
import { errorMessage } from "../util/errors.ts";
import { clipText } from "../util/text.ts";
import { redactForStorage } from "../policy/redact.ts";

export const EMPTY_ANSWER_NUDGE = "Your last reply was empty. Reply now with your final answer as plain text.";
const EVENT_CONTENT_LIMIT = 16_384;

export interface LoopOptions {
  model: ModelClient;
  modelName: string;
  system: string;
  messages: ChatMessage[];
  tools: ToolDefinition[];
  maxTokens: number;
  temperature?: number;
  turnBudget: number;
  /** Runs one call; `key` is its idempotency key, `interrupted` when a lost attempt had started it. */
  executeTool: (call: ToolCall, how: ToolCallContext) => Promise<string>;
  /** What the model sees when a tool fails; the worker's default is `Error executing tool: <msg>`. */
  toolErrorText?: (message: string) => string;
  emit: (event: ExecutionEventInput) => void;
  /** Checked after every tool call: a text ends the iteration now, as its result (a parked approval). */
  stopAfterTool?: () => string | undefined;
  /** Each assistant and tool message as it joins the conversation (for session transcripts). */
  onMessage?: (message: ChatMessage) => void;
  /** Written before each step is acted on; without it nothing survives a lost worker. */
  journal?: LoopJournal;
  /** Where a journalled run stopped, to continue from there instead of from the start. */
  resume?: LoopResume;
  /**
   * Whether a call must be journalled as started before it runs: only calls that are not simply
   * run again after a lost worker need to be known as interrupted.
   */
  marksStart?: (call: ToolCall) => boolean;
  signal: AbortSignal;
}

export interface LoopJournal {
  /** Writes what the model has not seen journalled yet, if anything, with `closing` after it; answers whether it wrote. */
  request(messages: ChatMessage[], system?: string, closing?: ExecutionEventInput[]): Promise<boolean>;
  response(message: ChatMessage): Promise<void>;
  toolStarted(call: ToolCall, key: string): Promise<void>;
  /** A call's place: the steps it acts on (written before it acts, or carried by it), and its result step, which the control plane may write with the call's reply. */
  callJournal(call: ToolCall): JournalledCall;
  /** Writes the result step, unless the control plane wrote it (`call` says so). */
  toolResult(message: ChatMessage, call?: JournalledCall): Promise<ChatMessage>;
  keyFor(callIndex: number, call: ToolCall): string;
}

export class LoopFailure extends Error {}

const workerToolError = (message: string) => `Error executing tool: ${message}`;

export interface LoopResult {
  text: string;
  usage: { inputTokens: number; outputTokens: number };
}

/**
 * The tool-calling loop: ask, run the tool calls in order, repeat until a text answer.
 * With a journal, each step is recorded before it is acted on; with `resume`, the loop continues a
 * journalled run: a journalled answer is never asked for again, and recorded tool results are reused.
 */
export async function runToolLoop(options: LoopOptions): Promise<LoopResult> {
  const messages = [...options.messages];
  const usage = { inputTokens: 0, outputTokens: 0 };
  const state: LoopResume = options.resume ? { ...options.resume, pending: [...options.resume.pending] } : { turn: 0, pending: [], nudged: false, callIndex: 0 };
  if (state.final !== undefined) return { text: state.final, usage };
  if (state.pending.length > 0) {
    const stop = await runCalls(options, messages, state, state.pending);
    if (stop !== undefined) return { text: stop, usage };
  }
  for (let turn = state.turn + 1; turn <= options.turnBudget; turn++) {
    const tools = state.nudged ? [] : options.tools;
    // Told with the step written before the request, when there is one: one call to the control plane, and
    // a watcher sees the model asked without waiting for the events sent on their own.
    const started: ExecutionEventInput = { type: "ModelRequestStarted", summary: `turn ${turn}: ${messages.length} messages, ${tools.length} tools` };
    if (!(await options.journal?.request(messages, options.system, [started]))) options.emit(started);
    const response = await requestTurn(options, messages, tools, turn);
    usage.inputTokens += response.usage?.inputTokens ?? 0;
    usage.outputTokens += response.usage?.outputTokens ?? 0;
    if (response.toolCalls.length === 0) refuseIncomplete(response);
    const assistant: ChatMessage = response.toolCalls.length > 0 ? { role: "assistant", content: response.text, toolCalls: response.toolCalls } : { role: "assistant", content: response.text };
    await options.journal?.response(assistant);
    if (response.toolCalls.length === 0) {
      if (response.text.trim()) {
        options.onMessage?.(assistant);
        return { text: response.text, usage };
      }
      if (state.nudged) throw new LoopFailure("model returned an empty final response after one retry");
      state.nudged = true;
      messages.push(assistant, { role: "user", content: EMPTY_ANSWER_NUDGE });
      turn--; // the nudge is the one extra turn, not part of the budget
      continue;
    }
    messages.push(assistant);
    options.onMessage?.(assistant);
    const stop = await runCalls(options, messages, state, response.toolCalls);
    if (stop !== undefined) return { text: stop, usage };
  }
  throw new LoopFailure("max iterations reached without completion");
}

/** Runs calls in order, each journalled as started and then with its result; returns a parking text to stop. */
async function runCalls(options: LoopOptions, messages: ChatMessage[], state: LoopResume, calls: ToolCall[]): Promise<string | undefined> {
  for (const call of calls) {
    const interrupted = state.interrupted === call.id;
    const key = options.journal?.keyFor(state.callIndex, call);
    if (key && !interrupted && options.marksStart?.(call)) await options.journal!.toolStarted(call, key);
    const journal = options.journal?.callJournal(call);
    const content = await runToolCall(options, call, { key, interrupted, journal });
    const message = toolMessage(call.id, call.name, content);
    // What is journalled is what the model is given, exactly as a resumed run will replay it.
    const result = options.journal ? await options.journal.toolResult(message, journal) : message;
    state.interrupted = undefined;
    state.callIndex++;
    messages.push(result);
    options.onMessage?.(result);
    const stop = options.stopAfterTool?.();
    if (stop) {
      options.emit({ type: "IterationParked", severity: "warning", summary: stop });
      return stop;
    }
  }
  return undefined;
}

async function requestTurn(options: LoopOptions, messages: ChatMessage[], tools: ToolDefinition[], turn: number): Promise<ModelResponse> {
  const request = {
    model: options.modelName,
    system: options.system || undefined,
    tools,
    maxTokens: options.maxTokens,
    temperature: options.temperature,
    signal: options.signal,
  };
  let response: ModelResponse;
  try {
    response = await options.model.complete({ ...request, messages });
  } catch (err) {
    if (!(err instanceof ModelApiError && err.contextTooLong)) throw failed(options, err);
    const kept = halveHistory(messages);
    options.emit({ type: "ContextTruncated", severity: "warning", summary: `context too long: kept ${kept.length} of ${messages.length} messages` });
    messages.splice(0, messages.length, ...kept);
    try {
      response = await options.model.complete({ ...request, messages });
    } catch (retryErr) {
      throw failed(options, retryErr);
    }
  }
  options.emit({
    type: "ModelRequestCompleted",
    summary: `turn ${turn}: ${response.toolCalls.length} tool calls, finish ${response.finish}`,
  });
  if (response.text) options.emit({ type: "ModelMessage", summary: clipText(response.text, 200), content: clipText(response.text, EVENT_CONTENT_LIMIT) });
  return response;
}

function failed(options: LoopOptions, err: unknown): unknown {
  options.emit({ type: "ModelRequestFailed", severity: "error", summary: errorMessage(err) });
  return err;
}

function refuseIncomplete(response: ModelResponse): void {
  if (response.finish === "refusal") throw new LoopFailure("model refused to answer");
  if (response.finish === "length") throw new LoopFailure("model response was incomplete: the token limit was reached");
  if (response.finish === "unknown") throw new LoopFailure("model stopped for an unknown reason");
}

async function runToolCall(options: LoopOptions, call: ToolCall, how: ToolCallContext): Promise<string> {
  const base = { toolName: call.name, toolCallID: call.id };
  options.emit({ ...base, type: "ToolCallStarted", summary: how.interrupted ? `${call.name} (resumed)` : `${call.name}`, content: clipText(redactForStorage(call.arguments), EVENT_CONTENT_LIMIT) });
  try {
    const result = await options.executeTool(call, how);
    options.emit({ ...base, type: "ToolCallCompleted", summary: `${call.name} returned ${result.length} characters`, content: clipText(result, EVENT_CONTENT_LIMIT) });
    return result;
  } catch (err) {
    const text = (options.toolErrorText ?? workerToolError)(errorMessage(err));
    if (err instanceof ToolRejected) options.emit({ ...base, type: "ToolCallRejected", severity: "warning", summary: `${call.name}: ${err.reason}`, content: text });
    else options.emit({ ...base, type: "ToolCallFailed", severity: "warning", summary: clipText(text, 200), content: text });
    return text;
  }
}

/** Keeps the newer half of the conversation, starting at a user turn so tool results keep their calls. */
export function halveHistory(messages: ChatMessage[]): ChatMessage[] {
  let start = Math.floor(messages.length / 2);
  while (start < messages.length && messages[start].role !== "user") start++;
  if (start >= messages.length) start = messages.findLastIndex((m) => m.role === "user");
  return messages.slice(Math.max(start, 0));
}
