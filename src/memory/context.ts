import type { Memory, MemoryStore } from "../store/memory-store.ts";

/** How many reviewed memories an ai attempt's system prompt shows. */
export const MEMORY_CONTEXT_LIMIT = 5;

/** What the system prompt shows of a memory: only these fields travel to the attempt. */
export type MemoryContextEntry = Pick<Memory, "content" | "source" | "taskName" | "agentName" | "tags" | "createdAt">;

/**
 * The namespace's newest reviewed memories for an attempt's system prompt: the same recall a
 * worker's `GET memories/<ns>?limit=5` answers (enabled, not deleted, newest first).
 */
export function recallMemoryContext(store: MemoryStore, namespace: string): MemoryContextEntry[] {
  const memories = store.recall(namespace, { limit: MEMORY_CONTEXT_LIMIT, includeDisabled: false });
  return memories.map(({ content, source, taskName, agentName, tags, createdAt }) => ({ content, source, taskName, agentName, tags, createdAt }));
}
