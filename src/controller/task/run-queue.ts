/** Who runs next when worker slots are scarce: priority, aged by waiting time. */

export interface QueuedTask {
  key: string;
  priority: number;
  queuedAt: number;
  createdAt: number;
}

const AGEING_STEP_MS = 30_000;
const AGEING_BONUS = 25;
const STARVATION_MS = 5 * 60_000;
const MAX_PRIORITY = 1000;

/** Priority plus 25 per 30 s waited, capped at 1000; a Task waiting over 5 minutes goes first. */
export function effectivePriority(task: QueuedTask, now: number): number {
  const waited = now - task.queuedAt;
  if (waited > STARVATION_MS) return Number.POSITIVE_INFINITY;
  return Math.min(MAX_PRIORITY, task.priority + AGEING_BONUS * Math.floor(waited / AGEING_STEP_MS));
}

export function compareQueued(a: QueuedTask, b: QueuedTask, now: number): number {
  const pa = effectivePriority(a, now);
  const pb = effectivePriority(b, now);
  if (pa !== pb) return pb > pa ? 1 : -1;
  return a.queuedAt - b.queuedAt || a.createdAt - b.createdAt || a.key.localeCompare(b.key);
}

/** The Tasks that passed admission and wait for a worker slot. */
export class RunQueue {
  private readonly waiting = new Map<string, QueuedTask>();

  offer(task: QueuedTask): void {
    this.waiting.set(task.key, task);
  }

  /** Whether the key was queued. */
  remove(key: string): boolean {
    return this.waiting.delete(key);
  }

  /** The first `count` keys in run order. */
  head(count: number, now = Date.now()): string[] {
    if (count <= 0) return [];
    return [...this.waiting.values()]
      .sort((a, b) => compareQueued(a, b, now))
      .slice(0, count)
      .map((t) => t.key);
  }

  get size(): number {
    return this.waiting.size;
  }
}
