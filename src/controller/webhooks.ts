import { checkEgressUrl, EgressRefused, postJsonGuarded } from "../policy/ssrf.ts";
import { errorMessage } from "../util/errors.ts";
import type { Task } from "../resources/task.ts";
import { recordEvent, type TaskContext } from "./task/context.ts";
import { keyOf } from "./task/keys.ts";
import type { Transition } from "./task/status.ts";

const WEBHOOK_TIMEOUT_MS = 30_000;
const WEBHOOK_RETRY_MS = 30_000;

/**
 * POSTs an ended Task's outcome to its `spec.webhookURL`. A 2xx delivers it; a target the egress
 * policy refuses (SSRF) is given up at once; any other failure is tried again in 30 s.
 */
export async function deliverWebhook(ctx: TaskContext, task: Task): Promise<Transition> {
  const { metadata, status } = task;
  const payload = {
    taskName: metadata.name,
    taskNamespace: metadata.namespace,
    phase: status?.phase,
    message: status?.message,
    startTime: status?.startTime,
    completionTime: status?.completionTime,
    attempts: status?.attempts,
    resultRef: status?.resultRef,
  };
  const headers = { "X-Orka-Task": metadata.name, "X-Orka-Namespace": metadata.namespace };
  let code: number;
  try {
    // The webhook tells of the Task's end: it leaves once that is committed.
    await ctx.gate.settled();
    code = await postJsonGuarded(checkEgressUrl(task.spec.webhookURL!, ctx.egress), payload, headers, ctx.egress, WEBHOOK_TIMEOUT_MS);
  } catch (err) {
    if (!(err instanceof EgressRefused)) return retryLater(ctx, task, errorMessage(err));
    recordEvent(ctx, task, { type: "WebhookRefused", severity: "warning", summary: errorMessage(err) });
    return { status: { webhookDelivered: false } };
  }
  if (code < 200 || code >= 300) return retryLater(ctx, task, `webhook answered HTTP ${code}`);
  return { status: { webhookDelivered: true }, after: (written) => recordEvent(ctx, written, { type: "WebhookDelivered", summary: `webhook answered HTTP ${code}` }) };
}

function retryLater(ctx: TaskContext, task: Task, failure: string): Transition {
  recordEvent(ctx, task, { type: "WebhookFailed", severity: "warning", summary: failure });
  return { after: () => ctx.wake(keyOf(task), WEBHOOK_RETRY_MS) };
}
