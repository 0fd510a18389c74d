import type { AgentStatus } from "../../resources/agent.ts";
import { childrenOf } from "../../resources/meta.ts";
import type { TaskPhase, TaskSpec, TaskStatus, Task } from "../../resources/task.ts";
import { errorMessage } from "../../util/errors.ts";
import { parentNamespaceOf, parentTaskName } from "../../resources/parent-link.ts";
import { childSummary } from "./child-summary.ts";
import { cancelledDelivery } from "./delivery.ts";
import { setCondition } from "./conditions.ts";
import { recordEvent, type TaskContext } from "./context.ts";
import { keyOf, taskKey } from "./keys.ts";
import type { Transition } from "./status.ts";

const REASONS: Partial<Record<TaskPhase, string>> = { Succeeded: "TaskSucceeded", Failed: "TaskFailed", Cancelled: "TaskCancelled" };

/**
 * Ends a Task in `phase`: its status says so (with its children's last state), and then everything
 * it held is let go: its queue place, Secret values, session, pending approvals, plan and attempt
 * directories. Its parent and waiting siblings are woken.
 */
export async function completion(ctx: TaskContext, task: Task, phase: TaskPhase, message: string): Promise<Transition> {
  const reason = REASONS[phase] ?? "TaskCompleted";
  const { namespace, name } = task.metadata;
  const hasResult = ctx.data.getResult(namespace, name) !== undefined;
  return {
    status: {
      phase,
      completionTime: new Date().toISOString(),
      message,
      resultRef: { available: hasResult },
      retryAfter: undefined,
      executionOutcome: task.status?.executionOutcome ?? { phase, message },
      conditions: setCondition(task.status?.conditions, { type: "Complete", status: "True", reason, message }),
      ...(phase === "Cancelled" ? { delivery: cancelledDelivery(task) } : {}),
      ...(await childSummary(ctx.store, ctx.data, task)),
    },
    after: async (completed) => {
      ctx.attempts.dequeue(keyOf(completed));
      // Nothing the Task's attempts send is stored any more, so its Secret values need not be kept.
      ctx.secrets.forget(namespace, name);
      releaseSession(ctx, completed);
      ctx.approvals.cancelPending(namespace, name);
      ctx.coordination.deletePlan(namespace, name);
      recordEvent(ctx, completed, { type: reason, severity: phase === "Failed" ? "error" : "info", summary: message });
      await touchAgent(ctx, completed);
      await ctx.attempts.releaseExited(completed);
      const parent = parentTaskName(completed);
      if (parent) await wakeFamily(ctx, completed, parent);
    },
  };
}

export function releaseSession(ctx: TaskContext, task: Task): void {
  const session = task.spec.sessionRef;
  if (session) ctx.memory.unlockSession(task.metadata.namespace, session.name, task.metadata.name);
}

/** How fresh an Agent's `lastUsed` is kept: many Tasks of one Agent ending each second write it once. */
const LAST_USED_RESOLUTION_MS = 1000;

/**
 * The Agent's `lastUsed`, to the second: written only when the stored one is older. Best effort, a
 * conflict with an edit of the Agent is not worth a retry.
 */
async function touchAgent(ctx: TaskContext, task: Task): Promise<void> {
  const ref = task.spec.agentRef;
  if (!ref) return;
  const agent = await ctx.store.get<unknown, AgentStatus>("Agent", ref.namespace ?? task.metadata.namespace, ref.name);
  if (!agent) return;
  const now = Date.now();
  // A stored time ahead of this clock (it was set back) is replaced, not kept until the clock catches up.
  const age = now - Date.parse(agent.status?.lastUsed ?? "");
  if (age >= 0 && age < LAST_USED_RESOLUTION_MS) return;
  await ctx.store
    .updateStatus({ ...agent, status: { ...agent.status, lastUsed: new Date(now).toISOString() } })
    .catch((err) => ctx.logger.debug({ err: errorMessage(err) }, "agent lastUsed not updated"));
}

/** A child ended: its parent's summary changes, and a sibling waiting for a child slot may start. */
async function wakeFamily(ctx: TaskContext, child: Task, parent: string): Promise<void> {
  ctx.wake(taskKey(parentNamespaceOf(child), parent));
  const namespace = child.metadata.namespace;
  const siblings = await ctx.store.list<TaskSpec, TaskStatus>("Task", { namespace, labelSelector: childrenOf(parent) });
  for (const sibling of siblings.items) if (sibling.status?.phase === "Pending") ctx.wake(taskKey(namespace, sibling.metadata.name));
}
