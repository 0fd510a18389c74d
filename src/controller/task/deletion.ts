import { FINALIZER_CLEANUP } from "../../resources/meta.ts";
import type { Task } from "../../resources/task.ts";
import { releaseSession } from "./completion.ts";
import type { TaskContext } from "./context.ts";
import { keyOf } from "./keys.ts";

/** The cleanup finalizer goes on before anything else, so a deleted Task always passes through `finalizeDeletion`. */
export async function addFinalizer(ctx: TaskContext, task: Task): Promise<void> {
  await ctx.store.update({ ...task, metadata: { ...task.metadata, finalizers: [...(task.metadata.finalizers ?? []), FINALIZER_CLEANUP] } });
}

/** A deleted Task: its attempt stops, everything stored for it goes, then its finalizer (and so the Task). */
export async function finalizeDeletion(ctx: TaskContext, task: Task): Promise<void> {
  const { namespace, name } = task.metadata;
  ctx.attempts.dequeue(keyOf(task));
  const attemptId = task.status?.jobName;
  if (attemptId && ctx.attempts.isRunning(attemptId)) ctx.attempts.stop(task, "task deleted");
  if (attemptId) await ctx.attempts.release(attemptId);
  ctx.data.deleteTaskData(namespace, name);
  ctx.journal.deleteTask(namespace, name);
  ctx.coordination.deleteMessagesOf(namespace, name);
  ctx.coordination.deletePlan(namespace, name);
  releaseSession(ctx, task);
  await ctx.store.update({
    ...task,
    metadata: { ...task.metadata, finalizers: (task.metadata.finalizers ?? []).filter((f) => f !== FINALIZER_CLEANUP) },
  });
}
