import { readFileSync } from "node:fs";
import { z } from "zod";
import { scriptedTurnSchema, type ScriptedTurn } from "../resources/provider.ts";
import { parseWith } from "../resources/validate.ts";
import { parse } from "yaml";
import type { ModelClient, ModelRequest, ModelResponse } from "./model.ts";
import { ModelApiError } from "./model.ts";

/** Stands, in a scripted turn's text, for the last tool result in the conversation. */
const TOOL_RESULT_PLACEHOLDER = "{{toolResult}}";

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
      const text = (turn.text ?? "").replaceAll(TOOL_RESULT_PLACEHOLDER, lastToolResult(request));
      return { text, toolCalls, finish: toolCalls.length > 0 ? "tool_calls" : "stop" };
    },
  };
}

function lastToolResult(request: ModelRequest): string {
  const message = request.messages.findLast((m) => m.role === "tool");
  return message?.content ?? "(no tool was called)";
}

/** Reads scripted turns from a YAML or JSON file: a list of turns, or `{turns: [...]}`. */
export function loadScriptFile(path: string): ScriptedTurn[] {
  const doc: unknown = parse(readFileSync(path, "utf8"));
  const list = Array.isArray(doc) ? doc : (doc as { turns?: unknown })?.turns;
  return parseWith(z.array(scriptedTurnSchema), list, "turns");
}
