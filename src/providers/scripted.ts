import { constants } from "node:fs";
import { open, realpath } from "node:fs/promises";
import { isAbsolute, relative, resolve } from "node:path";
import { z } from "zod";
import { parse } from "yaml";
import { scriptedTurnSchema, type ScriptedTurn } from "../resources/provider.ts";
import { OrkaError } from "../util/errors.ts";
import { MAX_JSON_DEPTH, nestsDeeperThan } from "../util/deep-json.ts";
import { readCapped } from "../util/read-capped.ts";
import { type ModelClient, type ModelRequest, type ModelResponse, ModelApiError } from "./model.ts";

/** Stands, in a scripted turn's text, for the last tool result in the conversation. */
const TOOL_RESULT_PLACEHOLDER = "{{toolResult}}";
/** A script is a handful of turns; anything bigger is not one (and /dev/zero never ends). */
const MAX_SCRIPT_BYTES = 1024 * 1024;

/**
 * Orka's offline model: answers the n-th request of a conversation with the n-th scripted turn,
 * n being the number of assistant turns already in it. Stateless, so retries and resumes replay it.
 * A text can quote the last tool result, so a scripted answer tells the truth about its tools.
 */
export function scriptedModel(turns: ScriptedTurn[]): ModelClient {
  return {
    provider: "scripted",
    async complete(request: ModelRequest): Promise<ModelResponse> {
      const index = request.messages.filter((m) => m.role === "assistant").length;
      const turn = turns[index];
      if (!turn) throw new ModelApiError(`scripted provider has no turn ${index + 1} (the script has ${turns.length})`, 400);
      const toolCalls = (turn.toolCalls ?? []).map((call, i) => ({
        id: `call_${index + 1}_${i + 1}`,
        name: call.name,
        arguments: JSON.stringify(call.arguments ?? {}),
      }));
      const toolResult = lastToolResult(request);
      // A function, so that `$&` and the like in a tool result are quoted as written, not expanded.
      const text = (turn.text ?? "").replaceAll(TOOL_RESULT_PLACEHOLDER, () => toolResult);
      return { text, toolCalls, finish: toolCalls.length > 0 ? "tool_calls" : "stop" };
    },
  };
}

function lastToolResult(request: ModelRequest): string {
  const message = request.messages.findLast((m) => m.role === "tool");
  return message?.content ?? "(no tool was called)";
}

const refuse = (message: string) => new OrkaError("invalid_argument", message, { field: "spec.scripted.file" });
const isInside = (path: string, dir: string) => {
  const rest = relative(dir, path);
  return rest !== "" && !rest.startsWith("..") && !isAbsolute(rest);
};

/**
 * Where a script file named in a Provider lives: inside ORKA_SCRIPTED_DIR (relative names are
 * taken from there), or nowhere. Only the name is judged; `loadScriptFile` judges the real file.
 */
export function scriptPath(file: string, scriptedDir: string | undefined): string {
  if (!scriptedDir) throw refuse("spec.scripted.file needs ORKA_SCRIPTED_DIR: set it to the directory that holds script files, or use spec.scripted.turns");
  const path = resolve(scriptedDir, file);
  if (!isInside(path, resolve(scriptedDir))) throw refuse(`spec.scripted.file must name a file inside ORKA_SCRIPTED_DIR (${scriptedDir})`);
  return path;
}

/**
 * Reads scripted turns from a YAML or JSON file (a list of turns, or `{turns: [...]}`) inside
 * ORKA_SCRIPTED_DIR: symlinks may not lead out of it, judged on the name and again on the open
 * descriptor (a parent directory swapped for a symlink in between cannot lead out either), only a
 * regular file of at most 1 MiB is read, and no error quotes what the file holds.
 */
export async function loadScriptFile(file: string, scriptedDir: string | undefined): Promise<ScriptedTurn[]> {
  const path = scriptPath(file, scriptedDir);
  const [real, realDir] = await Promise.all([realpath(path), realpath(scriptedDir!)]).catch(() => {
    throw refuse(`scripted file "${file}" was not found in ORKA_SCRIPTED_DIR`);
  });
  if (!isInside(real, realDir)) throw refuse(`scripted file "${file}" leads outside ORKA_SCRIPTED_DIR`);
  // O_NOFOLLOW: no last-moment symlink; O_NONBLOCK: a FIFO planted under the name must not hang the open.
  const handle = await open(real, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK).catch(() => {
    throw refuse(`scripted file "${file}" cannot be opened`);
  });
  try {
    const opened = await realpath(`/proc/self/fd/${handle.fd}`);
    if (!isInside(opened, realDir)) throw refuse(`scripted file "${file}" leads outside ORKA_SCRIPTED_DIR`);
    if (!(await handle.stat()).isFile()) throw refuse(`scripted file "${file}" is not a regular file`);
    const { body, capped } = await readCapped(handle.createReadStream({ autoClose: false }), MAX_SCRIPT_BYTES);
    if (capped) throw refuse(`scripted file "${file}" is larger than ${MAX_SCRIPT_BYTES} bytes`);
    return parseScript(body.toString("utf8"), file);
  } finally {
    await handle.close();
  }
}

/** What is wrong at a place in the file, in Orka's words: zod's own text may quote keys the file holds. */
function describeScriptIssue(issue: z.core.$ZodIssue): string {
  if (issue.code === "unrecognized_keys") return "has fields a script does not take (a turn has text and toolCalls; a tool call has name and arguments)";
  return issue.message;
}

/** Errors name the place (line, or path of the turn) and what was expected, never the text: the file may not be a script at all. */
function parseScript(text: string, file: string): ScriptedTurn[] {
  let doc: unknown;
  try {
    doc = parse(text);
  } catch (err) {
    const at = (err as { linePos?: { line: number; col: number }[] }).linePos?.[0];
    throw refuse(`scripted file "${file}" is not valid YAML or JSON${at ? ` (line ${at.line}, column ${at.col})` : ""}`);
  }
  if (nestsDeeperThan(doc, MAX_JSON_DEPTH)) throw refuse(`scripted file "${file}" nests more than ${MAX_JSON_DEPTH} levels deep; flatten it`);
  const list = Array.isArray(doc) ? doc : (doc as { turns?: unknown } | null)?.turns;
  const parsed = z.array(scriptedTurnSchema).safeParse(list);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = ["turns", ...issue.path].join(".");
    throw refuse(`scripted file "${file}": ${where}: ${describeScriptIssue(issue)}`);
  }
  return parsed.data;
}
