import { z } from "zod";
import { redactForStorage } from "../policy/redact.ts";
import type { MemoryProposal, MemoryStore, NewProposal } from "../store/memory-store.ts";
import { OrkaError } from "../util/errors.ts";

/** Limits on what a proposal may carry; oversized input is refused, never truncated. */
export const MAX_CONTENT_CHARS = 64 * 1024;
export const MAX_TITLE_CHARS = 200;

/** `tags`/`roles`: an array or a CSV string. */
export const stringList = z
  .union([z.array(z.string()), z.string()])
  .transform((value) => (Array.isArray(value) ? value : value.split(",")).map((s) => s.trim()).filter(Boolean));

export const proposalInputSchema = z.object({
  title: z.string().max(MAX_TITLE_CHARS, `title must be at most ${MAX_TITLE_CHARS} characters`),
  type: z
    .string()
    .default("skill")
    .transform((t) => t.trim().toLowerCase())
    .pipe(z.string().regex(/^[a-z0-9_-]{1,32}$/, "type must be 1-32 characters of a-z, 0-9, _ or -")),
  skillName: z.string().max(253).optional(),
  description: z.string().max(MAX_CONTENT_CHARS, `description must be at most ${MAX_CONTENT_CHARS} characters`).optional(),
  content: z.string().max(MAX_CONTENT_CHARS, `content must be at most ${MAX_CONTENT_CHARS} characters`).optional(),
  patch: z.string().max(MAX_CONTENT_CHARS, `patch must be at most ${MAX_CONTENT_CHARS} characters`).optional(),
  agentName: z.string().max(253).optional(),
  taskName: z.string().max(253).optional(),
});
export type ProposalInput = z.input<typeof proposalInputSchema>;

/** Non-empty after redaction, or refused: a secret alone is not a memory. */
function redactedRequired(field: string, value: string): string {
  const redacted = redactForStorage(value).trim();
  if (!redacted || /^(\[REDACTED\]\s*)+$/.test(redacted)) throw new OrkaError("invalid_argument", `${field} is empty after removing secrets`);
  return redacted;
}

const redactedOptional = (value: string | undefined) => (value === undefined ? undefined : redactForStorage(value));

/**
 * Creates a proposal. Whoever calls (a worker or a person), it starts `pending`: review fields
 * are not accepted here, so nothing a model does can approve its own proposal.
 */
export function createProposal(store: MemoryStore, namespace: string, input: z.output<typeof proposalInputSchema>): MemoryProposal {
  if (!input.title.trim()) throw new OrkaError("invalid_argument", "title is required");
  const proposal: NewProposal = {
    title: redactedRequired("title", input.title),
    type: input.type,
    skillName: input.skillName,
    description: redactedOptional(input.description),
    content: input.content === undefined ? undefined : redactedRequired("content", input.content),
    patch: redactedOptional(input.patch),
    agentName: input.agentName,
    taskName: input.taskName,
  };
  return store.createProposal(namespace, proposal);
}

/** `remember`'s title: the first non-blank line, whitespace collapsed, at most 80 characters; else "Memory". */
export function titleFromContent(content: string): string {
  const line = content.split("\n").map((l) => l.replace(/\s+/g, " ").trim()).find(Boolean);
  return line ? Array.from(line).slice(0, 80).join("") : "Memory";
}

export { redactedRequired as redactRequired };
