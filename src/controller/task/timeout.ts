import { parseDuration } from "../../util/duration.ts";
import type { Task } from "../../resources/task.ts";

const AGENT_TIMEOUT_MS = 30 * 60_000;

/** How long the Task may run: its `spec.timeout`; a coding-agent Task gets 30 minutes without one. */
export function timeoutMs(task: Task): number | undefined {
  if (task.spec.timeout) return parseDuration(task.spec.timeout);
  return task.spec.type === "agent" ? AGENT_TIMEOUT_MS : undefined;
}

/** The time limit a Task got without setting one, said where its status is read; undefined when it set its own or has none. */
export function defaultTimeoutNote(task: Task): string | undefined {
  if (task.spec.timeout || task.spec.type !== "agent") return undefined;
  return `times out ${AGENT_TIMEOUT_MS / 60_000}m after its creation, the default for type: agent (set spec.timeout to change it)`;
}

/** A coding-agent Task's time counts from its creation, any other's from its attempt's start. */
export function timedOut(task: Task, now: number): boolean {
  const timeout = timeoutMs(task);
  if (timeout === undefined) return false;
  const since = task.spec.type === "agent" ? task.metadata.creationTimestamp : task.status?.startTime;
  return now - Date.parse(since ?? new Date(now).toISOString()) >= timeout;
}
