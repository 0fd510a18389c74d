import type { ExecutionEventInput } from "../../store/data-store.ts";
import type { Task } from "../../resources/task.ts";
import type { ControllerOptions, Wake } from "../options.ts";
import type { Attempts } from "./attempts.ts";

/** What the Task reconciler's parts share: the controller's stores and settings, the worker slots, the work queue. */
export interface TaskContext extends ControllerOptions {
  attempts: Attempts;
  wake: Wake;
}

export function recordEvent(ctx: TaskContext, task: Task, event: ExecutionEventInput): void {
  ctx.data.appendEvent(task.metadata.namespace, task.metadata.name, event);
}
