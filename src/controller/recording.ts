import type { ChatMessage, ToolCall } from "../providers/model.ts";
import { requestDigest } from "../providers/replay.ts";
import { API_VERSION } from "../resources/meta.ts";
import type { ReplayTurn } from "../resources/provider.ts";
import type { JournalStep } from "../store/journal-store.ts";

/**
 * A journalled run as a `replay` Provider (`orka task export`): each model turn with the digest of
 * the request it answered (the conversation up to it).
 */
export function replayProviderFrom(steps: JournalStep[], source: { task: string; namespace: string; run: number }, name: string) {
  const turns: ReplayTurn[] = [];
  const messages: ChatMessage[] = [];
  let system = "";
  for (const step of steps) {
    const added = step.messages as ChatMessage[];
    if (step.kind === "request") {
      if (typeof step.detail.system === "string") system = step.detail.system;
      messages.push(...added);
    } else if (step.kind === "response") {
      // The request this answered was the conversation so far.
      const answer = added[0] as { content: string; toolCalls?: ToolCall[] };
      turns.push({ requestDigest: requestDigest(system, messages), text: answer.content, toolCalls: answer.toolCalls ?? [] });
      messages.push(added[0]);
    } else if (step.kind === "tool_result") {
      messages.push(added[0]);
    }
  }
  return {
    apiVersion: API_VERSION,
    kind: "Provider",
    metadata: { name, namespace: source.namespace },
    spec: { type: "replay", replay: { strict: true, source: { ...source, exportedAt: new Date().toISOString() }, turns } },
  };
}
