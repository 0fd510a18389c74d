import type { TaskCondition } from "../../resources/task.ts";

/** Sets one condition, keeping its transition time when its status does not change. */
export function setCondition(conditions: TaskCondition[] | undefined, next: Omit<TaskCondition, "lastTransitionTime">): TaskCondition[] {
  const list = conditions ?? [];
  const current = list.find((c) => c.type === next.type);
  const lastTransitionTime = current?.status === next.status ? current.lastTransitionTime : new Date().toISOString();
  return [...list.filter((c) => c.type !== next.type), { ...next, lastTransitionTime }];
}
