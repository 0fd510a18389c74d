import type { Task } from "../../resources/task.ts";

/** A Task's work-queue and run-queue key. */
export const taskKey = (namespace: string, name: string) => `Task/${namespace}/${name}`;

export const keyOf = (task: Task) => taskKey(task.metadata.namespace, task.metadata.name);
