import type { TaskStatus, Task } from "../../resources/task.ts";
import type { ResourceStore } from "../../store/resource-store.ts";

/**
 * What one pass does to a Task: the side effects that must come first run while the transition is
 * built, then its status is written once, then `after` runs with the Task as written.
 */
export interface Transition {
  status?: Partial<TaskStatus>;
  after?: (written: Task) => Promise<void> | void;
  /** Undoes what was prepared for the write when the write itself fails (a conflict: the pass runs again). */
  undo?: () => Promise<void>;
}

/**
 * Writes the patched status with a compare-and-swap on the resourceVersion the pass read (a conflict
 * throws, and the pass is tried again). Only a changed status is written: a write wakes this Task's
 * reconcile again, so a no-op must not write.
 */
export async function writeStatus(store: ResourceStore, task: Task, patch: Partial<TaskStatus>): Promise<Task> {
  const status = { ...task.status, ...patch };
  for (const field of Object.keys(status) as (keyof TaskStatus)[]) if (status[field] === undefined) delete status[field];
  if (JSON.stringify(status) === JSON.stringify(task.status ?? {})) return task;
  return store.updateStatus({ ...task, status });
}

/** Writes a transition's status (if any), then runs what follows it. */
export async function commit(store: ResourceStore, task: Task, transition: Transition): Promise<void> {
  let written = task;
  try {
    if (transition.status) written = await writeStatus(store, task, transition.status);
  } catch (err) {
    await transition.undo?.();
    throw err;
  }
  await transition.after?.(written);
}
