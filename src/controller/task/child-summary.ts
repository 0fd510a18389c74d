import { childrenOf } from "../../resources/meta.ts";
import type { TaskSpec, TaskStatus, Task } from "../../resources/task.ts";
import type { TaskDataStore } from "../../store/data-store.ts";
import type { ResourceStore } from "../../store/resource-store.ts";
import { parentNamespaceOf, parentTaskName } from "../../resources/parent-link.ts";
import { resultWithoutDiff } from "../children.ts";

const CHILD_RESULT_LIMIT = 4096;

/**
 * A top-level Task's children, their phases and results, as its status shows them; undefined
 * when there is nothing to show (a child Task, or no children now or before).
 */
export async function childSummary(store: ResourceStore, data: TaskDataStore, task: Task): Promise<Pick<TaskStatus, "childTasks"> | undefined> {
  if (parentTaskName(task)) return undefined;
  // Children delegated to other namespaces are its children too.
  const children = (await store.list<TaskSpec, TaskStatus>("Task", { labelSelector: childrenOf(task.metadata.name) })).items.filter(
    (child) => parentNamespaceOf(child) === task.metadata.namespace,
  );
  if (children.length === 0 && !task.status?.childTasks) return undefined;
  const childTasks = children
    .sort((a, b) => a.metadata.name.localeCompare(b.metadata.name))
    .map((child) => {
      const stored = data.getResult(child.metadata.namespace, child.metadata.name);
      const result = stored === undefined ? undefined : resultWithoutDiff(stored).text;
      return {
        name: child.metadata.name,
        agent: child.spec.agentRef?.name,
        phase: child.status?.phase ?? "Pending",
        ...(result !== undefined ? { result: result.length > CHILD_RESULT_LIMIT ? `${result.slice(0, CHILD_RESULT_LIMIT)}\n[truncated]` : result } : {}),
      };
    });
  return { childTasks };
}
