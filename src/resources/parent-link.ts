import { ANNOTATION, API_VERSION, LABEL, labelValue, type ObjectMeta } from "./meta.ts";
import type { Task } from "./task.ts";

/** The Task that created this one (delegated or scheduled it), if any. */
export function parentTaskName(task: Task): string | undefined {
  return task.metadata.annotations?.[ANNOTATION.parentTaskName] ?? task.metadata.labels?.[LABEL.parentTask];
}

/** The namespace a child's parent lives in: its own, unless it was delegated to another one. */
export function parentNamespaceOf(task: Task): string {
  return task.metadata.annotations?.[ANNOTATION.parentTaskNamespace] ?? task.metadata.namespace;
}

/**
 * The parent link of what a Task creates in `namespace` (a delegated or scheduled child Task, an Agent
 * made with create_agent): the parent label and annotation, with the parent's namespace when it is
 * another one, and an owner reference only within one namespace (owners cannot reach across), so
 * deleting the parent deletes what it made.
 */
export function parentLink(parent: Task, namespace: string, extra: { labels?: Record<string, string>; annotations?: Record<string, string> } = {}): Pick<ObjectMeta, "labels" | "annotations" | "ownerReferences"> {
  const sameNamespace = namespace === parent.metadata.namespace;
  return {
    labels: { [LABEL.parentTask]: labelValue(parent.metadata.name), ...extra.labels },
    annotations: {
      [ANNOTATION.parentTaskName]: parent.metadata.name,
      ...(sameNamespace ? {} : { [ANNOTATION.parentTaskNamespace]: parent.metadata.namespace }),
      ...extra.annotations,
    },
    ...(sameNamespace ? { ownerReferences: [{ apiVersion: API_VERSION, kind: "Task", name: parent.metadata.name, uid: parent.metadata.uid!, controller: true }] } : {}),
  };
}
