import type { ToolCall } from "../providers/model.ts";
import { jsonDepth, MAX_JSON_DEPTH } from "../util/deep-json.ts";
import type { ToolContext, BuiltinTool, ResumeRule } from "../tools/define.ts";
import { builtinTool } from "../tools/registry.ts";
import { describeZodError } from "../resources/validate.ts";
import { redactValues } from "../policy/redact.ts";
import { ToolRejected, type JournalledCall, type ToolCallContext } from "./tool-call.ts";
import { OrkaError } from "../util/errors.ts";
import { ToolRefusal } from "../tools/envelope.ts";

export interface ToolExecutorOptions {
  /** The names this attempt was given; anything else is refused. */
  allowed: readonly string[];
  customTools: ReadonlySet<string>;
  /** Runs a custom Tool on the control plane; with `journal`, the call carries the steps it acts on, and the control plane may journal the result with the reply. */
  callCustomTool: (name: string, args: Record<string, unknown>, key?: string, journal?: JournalledCall) => Promise<string>;
  context: ToolContext;
  /** The refusal for a tool that was not offered (the worker's: `tool "<x>" was not enabled for this task`). */
  notOffered?: (name: string) => string;
  /** Secret values the attempt carries: an upstream may echo one in an answer or an error, which the model must not see. */
  secretValues?: readonly string[];
  /**
   * Makes the directories the context names, when they may not exist yet: called before the first
   * built-in tool runs (custom Tools run on the control plane and need none).
   */
  prepareDirs?: () => void;
}

/** What the model is told about a call that may or may not have happened before its worker was lost. */
export const outcomeUnknown = (tool: string) =>
  `outcome unknown: the worker running this ${tool} call was lost after it started, so it may or may not have taken effect. It was not run again; check its effects before repeating it.`;

/**
 * Runs one model tool call: allowed-list check, argument validation, then the tool; arguments the tool
 * does not take are named back in its result (or error). Errors are thrown.
 * A call carries its idempotency key to the control plane; a resumed call of a tool that is not safe
 * to repeat is answered with `outcome unknown` instead of being run.
 */
export function toolExecutor(options: ToolExecutorOptions): (call: ToolCall, how?: ToolCallContext) => Promise<string> {
  const execute = runCall(options);
  const scrub = (text: string) => redactValues(text, options.secretValues ?? []);
  return async (call, how) => {
    try {
      return scrub(await execute(call, how));
    } catch (err) {
      if (err instanceof Error) err.message = scrub(err.message);
      throw err;
    }
  };
}

function runCall(options: ToolExecutorOptions): (call: ToolCall, how?: ToolCallContext) => Promise<string> {
  let dirsPrepared = false;
  return async (call, how = { interrupted: false }) => {
    if (!options.allowed.includes(call.name)) {
      throw new ToolRejected("tool_not_enabled", options.notOffered?.(call.name) ?? `tool "${call.name}" was not enabled for this task`);
    }
    const args = parseArguments(call.arguments);
    if (options.customTools.has(call.name)) return options.callCustomTool(call.name, args, how.key, how.journal);
    const tool = builtinTool(call.name);
    if (!tool) throw new OrkaError("not_found", `tool "${call.name}" is not available in this Orka build`);

    for (const [alias, name] of Object.entries(tool.aliases ?? {})) {
      if (args[alias] !== undefined && args[name] === undefined) args[name] = args[alias];
      delete args[alias];
    }
    // Validation drops arguments the tool does not take; the model is told, so it learns rather than guesses.
    const ignored = ignoredNote(Object.keys(args).filter((key) => !Object.hasOwn(tool.parameters.shape, key)));
    try {
      return (await runBuiltin(tool, args, call.name, how)) + ignored;
    } catch (err) {
      if (ignored && err instanceof Error) err.message += ignored;
      throw err;
    }
  };

  async function runBuiltin(tool: BuiltinTool, args: Record<string, unknown>, name: string, how: ToolCallContext): Promise<string> {
    const parsed = tool.parameters.safeParse(args);
    if (!parsed.success) {
      const message = `invalid arguments: ${describeZodError(parsed.error).message}`;
      if (tool.answersWithEnvelope) return JSON.stringify(new ToolRefusal("invalid_arguments", message, `fix the arguments and call ${name} again`).envelope(), null, 2);
      throw new OrkaError("invalid_argument", message);
    }
    if (how.interrupted && resumeRule(tool, parsed.data) === "unknown") return outcomeUnknown(name);
    await how.journal?.writeFirst();
    if (!dirsPrepared) {
      options.prepareDirs?.();
      dirsPrepared = true;
    }
    const context = how.key && !tool.readOnly ? { ...options.context, callKey: how.key, controlPlane: options.context.controlPlane.withIdempotencyKey(how.key) } : options.context;
    const result = await tool.run(parsed.data, context);
    return capResult(typeof result === "string" ? result : JSON.stringify(result, null, 2));
  }
}

const MAX_IGNORED_NAMES = 20;

/** The line that names ignored arguments (a bounded list, however many a model sends), or "". */
function ignoredNote(names: string[]): string {
  if (names.length === 0) return "";
  const shown = names.slice(0, MAX_IGNORED_NAMES).map((name) => (name.length > 64 ? `${name.slice(0, 64)}…` : name));
  const more = names.length > shown.length ? `, and ${names.length - shown.length} more` : "";
  return `\n[ignored arguments this tool does not take: ${shown.join(", ")}${more}]`;
}

function resumeRule(tool: BuiltinTool, args: unknown): ResumeRule {
  return typeof tool.onResume === "function" ? tool.onResume(args as never) : (tool.onResume ?? "rerun");
}

/**
 * Whether a call would be answered `outcome unknown` if its worker were lost mid-call — the calls
 * the journal must mark as started. Custom Tools are settled by the control plane's ledger instead.
 */
export function mustMarkStart(call: ToolCall): boolean {
  const tool = builtinTool(call.name);
  if (!tool?.onResume) return false;
  try {
    const parsed = tool.parameters.safeParse(parseArguments(call.arguments));
    return parsed.success && resumeRule(tool, parsed.data) === "unknown";
  } catch {
    return false; // arguments that do not parse are refused before anything runs
  }
}

function parseArguments(text: string): Record<string, unknown> {
  const depth = jsonDepth(text);
  if (depth > MAX_JSON_DEPTH) throw new OrkaError("invalid_argument", `tool arguments are nested ${depth} levels deep; at most ${MAX_JSON_DEPTH} are allowed`);
  let value: unknown;
  try {
    value = text.trim() && text.trim() !== "null" ? JSON.parse(text) : {};
  } catch {
    throw new OrkaError("invalid_argument", "tool arguments are not valid JSON; send a JSON object");
  }
  if (!value || typeof value !== "object" || Array.isArray(value)) throw new OrkaError("invalid_argument", "tool arguments must be a JSON object");
  return value as Record<string, unknown>;
}

export const MAX_RESULT_BYTES = 2 * 1024 * 1024;

/** The cap on every tool result: at most 2 MiB, cut on a UTF-8 boundary, with a marker. */
export function capResult(text: string): string {
  const bytes = Buffer.from(text, "utf8");
  if (bytes.length <= MAX_RESULT_BYTES) return text;
  let end = MAX_RESULT_BYTES;
  while (end > 0 && (bytes[end] & 0xc0) === 0x80) end--;
  return `${bytes.subarray(0, end).toString("utf8")}\n[tool result truncated: ${bytes.length - end} bytes omitted]`;
}
