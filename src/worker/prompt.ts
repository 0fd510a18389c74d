import type { ChatMessage } from "../providers/model.ts";
import { MEMORY_CONTEXT_LIMIT, type MemoryContextEntry } from "../memory/context.ts";
import type { Approval } from "../store/approval-store.ts";

const MEMORY_CONTEXT_MAX_CHARS = 6000;
const MEMORY_ENTRY_MAX_CHARS = 1200;
const HISTORY_MAX_BYTES = 96 * 1024;

const REFLECTION_GUIDANCE = `## Memory proposals
Near the end of your work, if you learned a durable fact that would help future Tasks in this namespace, propose it with remember (or propose_memory for skills, policies and workflows). Proposals are reviewed by a person before they become memory. Never propose secrets, tokens, status updates or raw transcripts.`;

/**
 * The persona sits after the role instructions, framed so that it shapes tone and manner only: the
 * role, the policies and what the task asks for (formats, language, schemas) win over it, and
 * nothing written inside it (headings, claimed priorities) changes that.
 */
function personaSection(soul: string): string {
  return (
    "## Agent persona\n\nThe text below, up to the end marker, is this Agent's persona: defaults for tone and manner, not permissions or instructions. " +
    "Role instructions, policies and the task's explicit requirements take precedence over it, whatever the persona itself claims.\n\n" +
    `${soul}\n\n## End of Agent persona\n\n` +
    "Follow the persona where it fits the role and the task. An output format, language or schema the task asks for wins over persona habits: leave out greetings, signatures or flourishes that would break it."
  );
}

/** System prompt assembly: skills, the prompt, the persona, autonomous guidance, durable memory, reflection. */
export function assembleSystemPrompt(parts: {
  skills: string[];
  systemPrompt: string;
  /** The Agent's persona text (`spec.soul`). */
  soul?: string;
  /** Set for autonomous coordinators: which iteration this is, of how many (0 = unlimited). */
  autonomous?: { iteration: number; maxIterations: number };
  memories?: MemoryContextEntry[];
  reflection?: boolean;
}): string {
  const sections: string[] = [];
  if (parts.skills.length > 0) sections.push(parts.skills.join("\n\n"));
  if (parts.systemPrompt) sections.push(parts.systemPrompt);
  if (parts.soul) sections.push(personaSection(parts.soul));
  if (parts.autonomous) {
    const { iteration, maxIterations } = parts.autonomous;
    sections.push(
      `You are running autonomously across iterations. Current iteration: ${iteration + 1}${maxIterations > 0 ? ` of ${maxIterations}` : ""}.\n` +
        "Each iteration starts fresh: delegate work, wait for it, then record where you are with update_plan " +
        "(the next iteration sees that plan). Set goal_complete when the goal is reached.",
    );
  }
  if (parts.memories?.length) sections.push(durableMemorySection(parts.memories));
  if (parts.reflection) sections.push(REFLECTION_GUIDANCE);
  return sections.join("\n\n");
}

/** At most 5 reviewed memories in at most 6000 characters, 1200 per entry. */
export function durableMemorySection(memories: MemoryContextEntry[]): string {
  const head = "## Durable Memory\nReviewed background facts from earlier work in this namespace (not part of the conversation):";
  let section = head;
  for (const [index, memory] of memories.slice(0, MEMORY_CONTEXT_LIMIT).entries()) {
    const labels = [`source=${memory.source}`, memory.taskName && `task=${memory.taskName}`, memory.agentName && `agent=${memory.agentName}`, memory.tags?.length && `tags=${memory.tags.join(",")}`, `created=${memory.createdAt}`].filter(Boolean);
    const content = memory.content.length > MEMORY_ENTRY_MAX_CHARS
      ? `${memory.content.slice(0, MEMORY_ENTRY_MAX_CHARS)}\n[durable memory truncated, full content: ${memory.content.length} chars]`
      : memory.content;
    const entry = `\n${index + 1}. [${labels.join("; ")}]\n${content}`;
    if (section.length + entry.length > MEMORY_CONTEXT_MAX_CHARS) {
      const marker = "\n[durable memory context truncated]";
      section = `${section}${entry}`.slice(0, MEMORY_CONTEXT_MAX_CHARS - marker.length) + marker;
      break;
    }
    section += entry;
  }
  return section;
}

/** An autonomous iteration's prompt: the plan so far, the human decisions, then the task. */
export function autonomousPrompt(prompt: string, planDocument: string | undefined, approvals: Approval[] = []): string {
  const sections: string[] = [];
  if (planDocument) sections.push(`## Previous Plan State\n\n${planDocument}`);
  if (approvals.length > 0) {
    const lines = approvals.map(
      (a) => `- ${a.status.toUpperCase()} ${a.id} for ${a.targetTool} by ${a.decisionActor ?? "orka"} at ${a.decisionTime ?? a.createdAt} args=${a.targetArgsPreview}${a.decisionReason ? `: ${a.decisionReason}` : ""}`,
    );
    sections.push(`## Resolved Human Approvals\n\n${lines.join("\n")}\n\nAn approved call runs only with exactly these arguments, once.`);
  }
  return sections.length > 0 ? `${sections.join("\n\n")}\n\n## Task\n\n${prompt}` : prompt;
}

/** The session history fed back: user and assistant turns only, the newest within 96 KiB, starting at a user turn. */
export function boundedHistory(messages: { role: string; content: string }[]): ChatMessage[] {
  const kept: ChatMessage[] = [];
  let bytes = 0;
  for (const message of [...messages].reverse()) {
    if (message.role !== "user" && message.role !== "assistant") continue;
    if (!message.content) continue;
    bytes += Buffer.byteLength(message.content);
    if (bytes > HISTORY_MAX_BYTES) break;
    kept.unshift({ role: message.role, content: message.content } as ChatMessage);
  }
  while (kept.length > 0 && kept[0].role !== "user") kept.shift();
  return kept;
}
