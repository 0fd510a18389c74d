import { z } from "zod";
import { bindApproval, refuseReservedArgument } from "../../policy/approvals.ts";
import { redact } from "../../policy/redact.ts";
import type { AgentSpec } from "../../resources/agent.ts";
import type { Resource } from "../../resources/meta.ts";
import type { TaskSpec, TaskStatus } from "../../resources/task.ts";
import type { ToolSpec } from "../../resources/tool.ts";
import { parseWith } from "../../resources/validate.ts";
import type { Attempt } from "../../store/data-store.ts";
import { BUILTIN_TOOL_NAMES } from "../../tools/registry.ts";
import { OrkaError } from "../../util/errors.ts";
import { authorizeWorker } from "../auth.ts";
import type { ApiContext } from "../context.ts";
import { authorizeToolUse } from "./tool-use.ts";
import { WORKER_API_PREFIX, type WorkerRoute } from "./worker-route.ts";

type Task = Resource<TaskSpec, TaskStatus>;
const TEXT_LIMIT = 1024;
const clip = (text: string | undefined) => (text === undefined ? undefined : redact(text).slice(0, TEXT_LIMIT));

const requestSchema = z.object({
  action: z.string().optional(),
  targetTool: z.string().trim().min(1, "targetTool is required"),
  targetArguments: z.record(z.string(), z.unknown(), { message: "targetArguments must be a JSON object" }),
  riskSummary: z.string().optional(),
  severity: z.enum(["warning", "critical"], { message: "severity must be warning or critical" }).default("warning"),
});

/** The coordination settings of the Task's Agent, if it has an Agent. */
export async function coordinationOf(ctx: ApiContext, task: Task) {
  const ref = task.spec.agentRef;
  const agent = ref ? await ctx.store.get<AgentSpec, unknown>("Agent", ref.namespace ?? task.metadata.namespace, ref.name) : undefined;
  return agent?.spec.coordination;
}

async function customTool(ctx: ApiContext, namespace: string, name: string) {
  if (BUILTIN_TOOL_NAMES.has(name)) throw new OrkaError("invalid_argument", `targetTool "${name}" is a built-in tool and cannot be approved with request_approval`);
  const tool = await ctx.store.get<ToolSpec, unknown>("Tool", namespace, name);
  if (!tool) throw new OrkaError("invalid_argument", `targetTool "${name}" is not a Tool in namespace ${namespace}`);
  return tool;
}

/** The call an approval is for: a Tool, and for an MCP Tool the server's tool it calls. */
interface ApprovedCall {
  tool: Resource<ToolSpec, unknown>;
  serverTool?: string;
}

const bindingOf = (task: Task, { tool, serverTool }: ApprovedCall, args: Record<string, unknown>) =>
  bindApproval({ namespace: task.metadata.namespace, task: task.metadata.name, taskUID: task.metadata.uid! }, tool, args, serverTool);

/** How a person is shown the call: the Tool's name, with the MCP server's tool when there is one. */
const callName = ({ tool, serverTool }: ApprovedCall) => (serverTool === undefined ? tool.metadata.name : `${tool.metadata.name} (its MCP tool "${serverTool}")`);

function requestFor(ctx: ApiContext, task: Task, call: ApprovedCall, args: Record<string, unknown>, text: { action: string; riskSummary?: string; severity: "warning" | "critical" }) {
  const { tool } = call;
  const binding = bindingOf(task, call, args);
  const approval = ctx.approvals.request({
    id: binding.id,
    namespace: task.metadata.namespace,
    taskName: task.metadata.name,
    taskUID: task.metadata.uid!,
    iteration: task.status?.iteration ?? 0,
    action: clip(text.action)!,
    targetTool: tool.metadata.name,
    targetArgsDigest: binding.argsDigest,
    targetSpecDigest: binding.specDigest,
    targetArgsPreview: binding.preview,
    riskSummary: clip(text.riskSummary),
    severity: text.severity,
  });
  ctx.data.appendEvent(task.metadata.namespace, task.metadata.name, {
    type: "ApprovalRequested",
    severity: "warning",
    toolName: tool.metadata.name,
    summary: `approval ${approval.id} requested for ${tool.metadata.name}`,
  });
  return approval;
}

/**
 * The gate in front of custom Tool calls: a Tool listed in `approvalRequiredTools`, or
 * an exact call someone asked approval for, runs once per attempt after a person approved it;
 * otherwise it is parked or refused. `task` is the attempt's Task, as the call's authorization read it.
 * An MCP Tool's call names the server's tool it calls: an approval of one is never spent on another.
 */
export async function approvalGate(
  ctx: ApiContext,
  attempt: Attempt,
  task: Resource<TaskSpec, TaskStatus>,
  call: ApprovedCall,
  args: Record<string, unknown>,
): Promise<{ run: Record<string, unknown> } | { parked: string }> {
  const { tool } = call;
  const gated = (await coordinationOf(ctx, task))?.approvalRequiredTools?.includes(tool.metadata.name) ?? false;
  refuseReservedArgument(args);
  // Most Tasks asked no person about this Tool: their calls need no binding, whose digests cost a little on every call.
  if (!gated && !ctx.approvals.askedFor(task.metadata.namespace, task.metadata.name, tool.metadata.name)) return { run: args };
  const binding = bindingOf(task, call, args);
  const existing = ctx.approvals.get(task.metadata.namespace, binding.id);
  // An exact call a person was asked about obeys the answer, gated tool or not.
  if (!gated && !existing) return { run: args };
  if (!existing) {
    const approval = requestFor(ctx, task, call, args, {
      action: `Execute ${callName(call)}`,
      riskSummary: `Human approval is required before executing ${callName(call)}`,
      severity: "warning",
    });
    return { parked: `approval requested for ${tool.metadata.name} (approvalID ${approval.id}); parked until a human decides` };
  }
  if (existing.status === "pending") return { parked: `approval ${existing.id} for ${tool.metadata.name} is still pending; parked until a human decides` };
  if (existing.status !== "approved") throw new OrkaError("permission_denied", `Not executed because approval ${existing.id} for ${tool.metadata.name} is ${existing.status}`);
  if (!ctx.approvals.markExecuted(task.metadata.namespace, existing.id, attempt.id)) {
    throw new OrkaError("permission_denied", `approval ${existing.id} for ${tool.metadata.name} was already used in this attempt; request approval again`);
  }
  if ("idempotencyKey" in args && args.idempotencyKey !== existing.id) throw new OrkaError("invalid_argument", "idempotencyKey conflicts with the approval id");
  return { run: { ...args, idempotencyKey: existing.id } };
}

export function internalApprovalRoutes(ctx: ApiContext): WorkerRoute[] {
  const url = "/tasks/:ns/:task/approvals";
  return [
    {
      method: "POST",
      url,
      handle: async (request) => {
        const attempt = authorizeWorker(ctx.data, request, request.params.ns, request.params.task);
        const task = await authorizeToolUse(ctx, attempt, ["request_approval"], WORKER_API_PREFIX + url);
        if (!(await coordinationOf(ctx, task))?.autonomous) throw new OrkaError("permission_denied", "human approval tools require autonomous coordination mode");
        const body = parseWith(requestSchema, request.body ?? {});
        const tool = await customTool(ctx, task.metadata.namespace, body.targetTool);
        const approval = requestFor(ctx, task, { tool }, body.targetArguments, { action: body.action?.trim() || `Execute ${tool.metadata.name}`, riskSummary: body.riskSummary, severity: body.severity });
        return {
          success: true,
          data: {
            approvalID: approval.id,
            targetTool: approval.targetTool,
            targetArgsDigest: approval.targetArgsDigest,
            status: approval.status,
            message: "approval requested; wait for a human decision before executing the approved action",
          },
        };
      },
    },
  ];
}
