import type { FastifyInstance } from "fastify";
import { z } from "zod";
import { parseWith } from "../../resources/validate.ts";
import { APPROVAL_STATUSES } from "../../store/approval-store.ts";
import { OrkaError } from "../../util/errors.ts";
import { namespaceField, namespaceOf, principalOf, type ApiContext } from "../context.ts";
import { isTaskDone, loadTask } from "./tasks.ts";

/** Approvals a parked Task waits on: listed per namespace or per Task, and decided by a person, which wakes the Task. */
export function registerApprovalRoutes(app: FastifyInstance, ctx: ApiContext): void {
  app.get("/approvals", async (request) => {
    const query = parseWith(z.object({ status: z.enum(APPROVAL_STATUSES).optional(), limit: z.coerce.number().int().min(1).max(500).default(200) }), request.query ?? {});
    const namespace = namespaceOf(request);
    return { namespace, approvals: ctx.approvals.list(namespace, query.status, query.limit) };
  });

  app.get<{ Params: { name: string } }>("/tasks/:name/approvals", async (request) => {
    const namespace = namespaceOf(request);
    const task = await loadTask(ctx.store, namespace, request.params.name);
    return { namespace, taskName: task.metadata.name, approvals: ctx.approvals.listForTask(namespace, task.metadata.name, task.metadata.uid) };
  });

  app.post<{ Params: { name: string; id: string } }>("/tasks/:name/approvals/:id/decision", async (request) => {
    const namespace = namespaceOf(request);
    const task = await loadTask(ctx.store, namespace, request.params.name);
    const body = parseWith(z.strictObject({ ...namespaceField, decision: z.unknown().optional(), reason: z.unknown().optional() }), request.body ?? {});
    const status = ({ approve: "approved", approved: "approved", decline: "declined", declined: "declined" } as const)[String(body.decision) as "approve"];
    if (!status) throw new OrkaError("invalid_argument", "decision must be approve or decline");
    const approval = ctx.approvals.get(namespace, request.params.id);
    if (!approval || approval.taskName !== task.metadata.name || approval.taskUID !== task.metadata.uid) throw new OrkaError("not_found", "approval not found");
    if (approval.status === status) return approval;
    if (approval.status !== "pending") throw new OrkaError("conflict", `approval is already ${approval.status}`);
    if (task.metadata.deletionTimestamp) throw new OrkaError("conflict", "task is deleting");
    if (isTaskDone(task)) throw new OrkaError("conflict", "task is complete");
    const reason = typeof body.reason === "string" ? body.reason.slice(0, 1024) : undefined;
    const decided = ctx.approvals.decide(namespace, approval.id, { status, reason, actor: principalOf(request).name });
    ctx.data.appendEvent(namespace, task.metadata.name, {
      type: status === "approved" ? "ApprovalApproved" : "ApprovalDeclined",
      toolName: approval.targetTool,
      summary: `approval ${approval.id} ${status} by ${decided.decisionActor}${reason ? `: ${reason}` : ""}`,
    });
    ctx.controller.poke(namespace, task.metadata.name);
    return decided;
  });
}
