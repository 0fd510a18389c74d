import { z } from "zod";
import { namespaceName } from "../../resources/meta.ts";
import { parseDuration } from "../../util/duration.ts";
import { errorMessage, OrkaError } from "../../util/errors.ts";
import { defineTool, type ToolContext } from "../define.ts";
import { containerArgs, createAgentArgs, delegateArgs, waitArgs } from "./schemas.ts";

const POLL_WINDOW_MS = 25_000;
const own = (ctx: ToolContext, path: string) => `tasks/${ctx.namespace}/${ctx.taskName}/${path}`;

export const delegateTask = defineTool({
  name: "delegate_task",
  family: "coordination",
  description: "Delegate a subtask to another agent. Returns the child task's name; use wait_for_tasks to collect its result.",
  parameters: delegateArgs,
  async run(args, ctx) {
    return ctx.controlPlane.post(own(ctx, "delegate"), args);
  },
});

export const waitForTasks = defineTool({
  name: "wait_for_tasks",
  readOnly: true,
  family: "coordination",
  description: "Wait until the named child tasks are Succeeded, Failed or Cancelled (or the timeout passes), then return their results.",
  parameters: waitArgs,
  async run({ tasks, timeout }, ctx) {
    if (tasks.length === 0) throw new OrkaError("invalid_argument", "at least one task name is required");
    let total: number;
    try {
      total = parseDuration(timeout);
    } catch (err) {
      throw new OrkaError("invalid_argument", `invalid timeout "${timeout}": ${errorMessage(err)}`);
    }
    const deadline = Date.now() + total;
    // The control plane answers as soon as every child has ended (it watches the store), else after a window.
    for (;;) {
      ctx.signal.throwIfAborted();
      const waitMs = Math.max(0, Math.min(POLL_WINDOW_MS, deadline - Date.now()));
      const state = (await ctx.controlPlane.post(own(ctx, "wait"), { tasks, waitMs })) as { completed: boolean };
      if (state.completed || Date.now() >= deadline) return state;
    }
  },
});

export const createContainerTask = defineTool({
  name: "create_container_task",
  family: "coordination",
  description: "Create a child container task running a command (with an optional cron schedule).",
  parameters: containerArgs,
  async run(args, ctx) {
    return ctx.controlPlane.post(own(ctx, "containers"), args);
  },
});

export const cancelTask = defineTool({
  name: "cancel_task",
  family: "coordination",
  description: "Cancel a running or pending child task of this task.",
  parameters: z.object({ task_name: z.string(), namespace: z.string().optional(), reason: z.string().optional() }),
  aliases: { taskName: "task_name" },
  async run({ task_name: taskName, reason }, ctx) {
    if (!taskName.trim()) throw new OrkaError("invalid_argument", "task_name is required");
    return ctx.controlPlane.post(own(ctx, "cancel-child"), { taskName, reason });
  },
});

export const sendMessage = defineTool({
  name: "send_message",
  family: "messaging",
  description: 'Send a message to a sibling task (a child of the same coordinator), or "*" to all siblings.',
  parameters: z.object({ to_task: z.string(), content: z.string() }),
  aliases: { toTask: "to_task" },
  async run({ to_task: toTask, content }, ctx) {
    const target = toTask.trim();
    if (!target || !content) throw new OrkaError("invalid_argument", "to_task and content are required");
    await ctx.controlPlane.post(`messages/${ctx.namespace}`, { toTask: target, content });
    return target === "*" ? "Message sent to all siblings" : `Message sent to ${target}`;
  },
});

export const checkMessages = defineTool({
  name: "check_messages",
  family: "messaging",
  description: "Read unread messages from sibling tasks.",
  parameters: z.object({ mark_read: z.boolean().default(true) }),
  aliases: { markRead: "mark_read" },
  async run({ mark_read: markRead }, ctx) {
    const messages = (await ctx.controlPlane.get(`messages/${ctx.namespace}/${ctx.taskName}`, { markRead: String(markRead) })) as unknown[];
    return messages.length ? JSON.stringify(messages) : "No new messages";
  },
});

export const updatePlan = defineTool({
  name: "update_plan",
  family: "planning",
  description: "Update the autonomous execution plan of this task.",
  parameters: z.object({
    summary: z.string(),
    plan_document: z.string(),
    progress_pct: z.number().int().optional(),
    goal_complete: z.boolean().optional(),
  }),
  aliases: { planDocument: "plan_document", progressPct: "progress_pct", goalComplete: "goal_complete" },
  async run(args, ctx) {
    if (!args.summary.trim()) throw new OrkaError("invalid_argument", "summary is required");
    if (!args.plan_document.trim()) throw new OrkaError("invalid_argument", "plan_document is required");
    const progress = args.progress_pct ?? 0;
    await ctx.controlPlane.post(`plans/${ctx.namespace}/${ctx.taskName}`, { ...args, progress_pct: progress });
    return `Plan updated: ${args.summary} (progress: ${progress}%${args.goal_complete ? ", goal marked as COMPLETE" : ""})`;
  },
});

export const createAgent = defineTool({
  name: "create_agent",
  family: "agents",
  description: "Create a specialist Agent for this task (owned by it and deleted with it). Delegate to the returned agentName.",
  parameters: createAgentArgs,
  async run(args, ctx) {
    return ctx.controlPlane.post(own(ctx, "agents"), args);
  },
});

export const deleteAgent = defineTool({
  name: "delete_agent",
  family: "agents",
  description: "Delete an Agent this task created.",
  parameters: z.object({ name: z.string(), namespace: namespaceName.optional().describe("Namespace of the Agent (defaults to this Task's)") }),
  async run({ name, namespace }, ctx) {
    if (!name.trim()) throw new OrkaError("invalid_argument", "agent name is required");
    return ctx.controlPlane.delete(own(ctx, `agents/${encodeURIComponent(name)}`), { namespace });
  },
});

export const COORDINATION_TOOL_DECLARATIONS = [createAgent, deleteAgent, delegateTask, waitForTasks, createContainerTask, cancelTask, sendMessage, checkMessages, updatePlan];

export const requestApproval = defineTool({
  name: "request_approval",
  family: "core",
  description:
    "Park this task until a person approves or declines one exact custom-tool call. This iteration ends after the request; a later iteration runs the call if approved.",
  parameters: z.object({
    action: z.string().describe("What you want to do, for the person deciding"),
    targetTool: z.string().describe("The custom Tool to call"),
    targetArguments: z.record(z.string(), z.unknown()).describe("The exact arguments of the call"),
    riskSummary: z.string().optional(),
    severity: z.string().optional().describe("warning or critical"),
  }),
  async run(args, ctx) {
    const answer = (await ctx.controlPlane.post(own(ctx, "approvals"), args)) as { data: { approvalID: string; targetTool: string } };
    ctx.park(`approval ${answer.data.approvalID} requested for ${answer.data.targetTool}; waiting for a human decision`);
    return answer;
  },
});
