import { canonicalDigest } from "../util/hash.ts";
import type { ReplaySpec } from "../resources/provider.ts";
import { type ChatMessage, type ModelClient, type ModelRequest, type ModelResponse, ModelApiError } from "./model.ts";

/** What a model request is, for recording and replay: the system prompt and the conversation. */
export function requestDigest(system: string, messages: ChatMessage[]): string {
  return canonicalDigest({ system, messages });
}

/**
 * A recorded run played back offline (`type: replay`): the n-th request of a conversation gets the
 * n-th recorded answer, bit for bit (text, tool-call ids and arguments). Strict replays refuse a
 * request that differs from the recording, so a changed prompt, tool or result fails the run.
 */
export function replayModel(spec: ReplaySpec): ModelClient {
  return {
    provider: "replay",
    async complete(request: ModelRequest): Promise<ModelResponse> {
      const index = request.messages.filter((m) => m.role === "assistant").length;
      const turn = spec.turns[index];
      if (!turn) throw new ModelApiError(`replay has no turn ${index + 1} (the recording has ${spec.turns.length})`, 400);
      const digest = requestDigest(request.system ?? "", request.messages);
      if (spec.strict && digest !== turn.requestDigest) {
        throw new ModelApiError(`replay diverged at turn ${index + 1}: the request differs from the recording (${digest} instead of ${turn.requestDigest})`, 400);
      }
      return { text: turn.text, toolCalls: turn.toolCalls.map((c) => ({ ...c })), finish: turn.toolCalls.length > 0 ? "tool_calls" : "stop" };
    },
  };
}
