import { isTerminal, type TaskSpec, type TaskStatus } from "../../resources/task.ts";
import type { Attempt } from "../../store/data-store.ts";
import { OrkaError } from "../../util/errors.ts";
import type { ApiContext } from "../context.ts";

/**
 * Per-call tool authorization, server side: a worker reaches a tool's control-plane half only when the tool was advertised to its
 * attempt, its Task is still the one the attempt runs and not finished, and the Task's stamped grant allows it.
 * `tools` lists the tools that use this endpoint; holding any one is enough. `grantedAs` is the name a grant knows the tool by,
 * when that is not the name the model called (an MCP Tool's tools are granted as the Tool).
 */
export async function authorizeToolUse(ctx: ApiContext, attempt: Attempt, tools: readonly string[], path: string, grantedAs?: string) {
  const tool = tools.find((name) => attempt.allowedTools.includes(name));
  if (!tool) throw new OrkaError("permission_denied", `tool "${tools[0]}" was not enabled for this task`);
  const task = await ctx.store.get<TaskSpec, TaskStatus>("Task", attempt.namespace, attempt.task);
  if (!task || task.metadata.uid !== attempt.taskUid) throw new OrkaError("permission_denied", "the attempt's task no longer exists");
  if (isTerminal(task)) throw new OrkaError("permission_denied", "the task has finished");
  if (task.spec.transaction) ctx.grants.toolCall(task.spec.transaction, grantedAs ?? tool, { method: "TOOL", path, principal: attempt.task, namespace: attempt.namespace });
  return task;
}
