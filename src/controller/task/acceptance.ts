import type { ExecutionEventInput } from "../../store/data-store.ts";
import type { Task, TaskStatus } from "../../resources/task.ts";

/**
 * A new Task's first status: Pending, queued now, no attempt yet. The API stores a Task it creates with
 * it (one write and one reconcile pass fewer); the controller gives it to a Task created any other way.
 */
export function acceptedStatus(): TaskStatus {
  return { phase: "Pending", queuedAt: new Date().toISOString(), attempts: 0 };
}

/** The event every Task's history opens with. */
export function createdEvent(task: Task): ExecutionEventInput {
  return { type: "TaskCreated", summary: `${task.spec.type} task created` };
}
