import type { ChatMessage, ToolCall } from "../providers/model.ts";
import { requestDigest } from "../providers/replay.ts";
import { API_VERSION } from "../resources/meta.ts";
import type { ReplayTurn } from "../resources/provider.ts";
import type { JournalStep } from "../store/journal-store.ts";

/**
 * A journalled run as a `replay` Provider (`orka task export`): each model turn with the digest of
 * the request it answered. A request the run never got an answer for is left out.
 */
export function replayProviderFrom(steps: JournalStep[], source: { task: string; namespace: string; run: number }, name: string) {
  const turns: ReplayTurn[] = [];
  const messages: ChatMessage[] = [];
  let system = "";
  let digest: string | undefined;
  for (const step of steps) {
    const added = step.messages as ChatMessage[];
    if (step.kind === "request") {
      if (typeof step.detail.system === "string") system = step.detail.system;
      messages.push(...added);
      digest = requestDigest(system, messages);
    } else if (step.kind === "response" && digest) {
      const answer = added[0] as { content: string; toolCalls?: ToolCall[] };
      turns.push({ requestDigest: digest, text: answer.content, toolCalls: answer.toolCalls ?? [] });
      messages.push(added[0]);
      digest = undefined;
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
