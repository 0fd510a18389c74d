import { z } from "zod";
import { createContainerChild, delegate, findChild, waitForChildren } from "../../controller/children.ts";
import { parentTaskName } from "../../resources/parent-link.ts";
import { createAgentForTask, deleteAgentForTask } from "../../controller/agents.ts";
import { createPrMonitor } from "../../controller/pr-monitor/create.ts";

import type { TaskSpec, TaskStatus } from "../../resources/task.ts";

import { namespaceName } from "../../resources/meta.ts";
import { parseWith } from "../../resources/validate.ts";
import { containerArgs, createAgentArgs, delegateArgs } from "../../tools/coordination/schemas.ts";
import { OrkaError } from "../../util/errors.ts";
import { authorizeWorker, authorizeWorkerInNamespace } from "../auth.ts";
import type { ApiContext } from "../context.ts";
import { authorizeToolUse } from "./tool-use.ts";
import { created, noContent, type WorkerRequest, type WorkerRoute } from "./worker-route.ts";

const MAX_WAIT_WINDOW_MS = 25_000;
const MAX_MESSAGE_BYTES = 64 * 1024;

/** /internal/v1 for coordinators and their children: delegation, containers, waiting, cancelling, messages, plans, Agents. */
export function internalCoordinationRoutes(ctx: ApiContext): WorkerRoute[] {
  /** The calling Task, checked against its attempt token: a worker acts only as its own Task, through tools it was given. */
  const callerTask = async (request: WorkerRequest, tools?: readonly string[]) => {
    const attempt = authorizeWorker(ctx.data, request, request.params.ns, request.params.task);
    if (tools) return { attempt, task: await authorizeToolUse(ctx, attempt, tools, request.route) };
    const task = await ctx.store.get<TaskSpec, TaskStatus>("Task", attempt.namespace, attempt.task);
    if (!task) throw new OrkaError("not_found", "task not found");
    return { attempt, task };
  };
  const childGrants = { gate: ctx.grants, exchange: ctx.childTokenExchange, isolation: ctx.isolation, gitHosts: ctx.git.allowedHosts };

  return [
    {
      method: "POST",
      url: "/tasks/:ns/:task/delegate",
      handle: async (request) => {
        const { task } = await callerTask(request, ["delegate_task"]);
        return created(await delegate(ctx.store, { ...childGrants, effectKey: request.effectKey }, task, parseWith(delegateArgs, request.body ?? {})));
      },
    },

    {
      method: "POST",
      url: "/tasks/:ns/:task/agents",
      handle: async (request) => {
        const { attempt, task } = await callerTask(request, ["create_agent"]);
        return created(await createAgentForTask(ctx.store, task, attempt.allowedTools, parseWith(createAgentArgs, request.body ?? {})));
      },
    },

    {
      method: "DELETE",
      url: "/tasks/:ns/:task/agents/:name",
      handle: async (request) => {
        const { task } = await callerTask(request, ["delete_agent"]);
        const { namespace } = parseWith(z.object({ namespace: namespaceName.optional() }), request.query ?? {});
        return deleteAgentForTask(ctx.store, ctx.isolation, task, request.params.name, namespace);
      },
    },

    {
      method: "POST",
      url: "/tasks/:ns/:task/containers",
      handle: async (request) => {
        const { task } = await callerTask(request, ["create_container_task"]);
        const parsed = containerArgs.safeParse(request.body ?? {});
        if (!parsed.success) return { success: false, error: parsed.error.issues[0].message, errorType: "invalid_arguments", suggestion: "fix the arguments" };
        return createContainerChild(ctx.store, { ...childGrants, effectKey: request.effectKey }, task, parsed.data);
      },
    },

    {
      method: "POST",
      url: "/tasks/:ns/:task/pr-monitors",
      handle: async (request) => {
        const { task } = await callerTask(request, ["create_pr_monitor"]);
        return createPrMonitor(ctx.store, { ...childGrants, effectKey: request.effectKey }, task, request.body);
      },
    },

    {
      method: "POST",
      url: "/tasks/:ns/:task/wait",
      handle: async (request) => {
        const { task } = await callerTask(request, ["wait_for_tasks"]);
        const body = parseWith(z.object({ tasks: z.array(z.string()).min(1, "at least one task name is required"), waitMs: z.number().int().min(0).default(0) }), request.body ?? {});
        return waitForChildren(ctx.store, ctx.data, task, body.tasks, Math.min(body.waitMs, MAX_WAIT_WINDOW_MS));
      },
    },

    {
      method: "POST",
      url: "/tasks/:ns/:task/cancel-child",
      handle: async (request) => {
        const { attempt, task: parent } = await callerTask(request, ["cancel_task"]);
        const body = parseWith(z.object({ taskName: z.string().trim().min(1, "task_name is required"), reason: z.string().max(1000).optional() }), request.body ?? {});
        if (parent.status?.jobName !== attempt.id) throw new OrkaError("permission_denied", "caller is not the current worker for this task");
        const child = await findChild(ctx.store, parent, body.taskName);
        if (!child || parentTaskName(child) !== parent.metadata.name) {
          throw new OrkaError("permission_denied", `task "${body.taskName}" is not a child of the current task "${parent.metadata.name}"`);
        }
        if (child.spec.type === "agent") throw new OrkaError("conflict", "cancel_task cannot cancel coding-agent runtime children");
        const phase = child.status?.phase ?? "Pending";
        if (phase !== "Pending" && phase !== "Running") return { taskName: body.taskName, status: phase };
        await ctx.controller.cancel(child.metadata.namespace, child.metadata.name, `cancelled by parent task${body.reason ? `: ${body.reason}` : ""}`);
        return { taskName: body.taskName, status: "cancellation requested" };
      },
    },

    {
      method: "POST",
      url: "/messages/:ns",
      handle: async (request) => {
        const attempt = authorizeWorkerInNamespace(ctx.data, request, request.params.ns);
        await authorizeToolUse(ctx, attempt, ["send_message"], request.route);
        const body = parseWith(z.object({ toTask: z.string().trim().min(1, "to_task and content are required"), content: z.string().min(1, "to_task and content are required") }), request.body ?? {});
        if (Buffer.byteLength(body.content) > MAX_MESSAGE_BYTES) throw new OrkaError("invalid_argument", `message content exceeds ${MAX_MESSAGE_BYTES} bytes`);
        const sender = await ctx.store.get<TaskSpec, TaskStatus>("Task", attempt.namespace, attempt.task);
        // The family comes from the sender's protected parent link, never from the request.
        const family = sender && parentTaskName(sender);
        if (!family) throw new OrkaError("invalid_argument", "messaging is only for delegated tasks: this task has no parent");
        if (body.toTask === attempt.task) throw new OrkaError("invalid_argument", "a task cannot message itself");
        if (body.toTask !== "*") {
          const target = await ctx.store.get<TaskSpec, TaskStatus>("Task", attempt.namespace, body.toTask);
          if (!target || parentTaskName(target) !== family) throw new OrkaError("permission_denied", `target task "${body.toTask}" is not a sibling in coordinator family "${family}"`);
        }
        ctx.coordination.sendMessage({ namespace: attempt.namespace, fromTask: attempt.task, toTask: body.toTask, parentTask: family, content: body.content });
        return noContent();
      },
    },

    {
      method: "GET",
      url: "/messages/:ns/:task",
      handle: async (request) => {
        const { task } = await callerTask(request, ["check_messages"]);
        const family = parentTaskName(task);
        if (!family) return [];
        return ctx.coordination.readMessages(task.metadata.namespace, family, task.metadata.name, request.query.markRead !== "false");
      },
    },

    {
      method: "POST",
      url: "/plans/:ns/:task",
      handle: async (request) => {
        const { task } = await callerTask(request, ["update_plan"]);
        const body = parseWith(
          z.object({
            summary: z.string().trim().min(1, "summary is required"),
            plan_document: z.string().trim().min(1, "plan_document is required"),
            progress_pct: z.number().int().min(0, "progress_pct must be between 0 and 100").max(100, "progress_pct must be between 0 and 100").default(0),
            goal_complete: z.boolean().default(false),
          }),
          request.body ?? {},
        );
        ctx.coordination.putPlan({
          namespace: task.metadata.namespace,
          task: task.metadata.name,
          iteration: task.status?.iteration ?? 0,
          summary: body.summary,
          planDocument: body.plan_document,
          progressPct: body.progress_pct,
          goalComplete: body.goal_complete,
        });
        return noContent();
      },
    },

    {
      method: "GET",
      url: "/plans/:ns/:task",
      handle: async (request) => {
        const { task } = await callerTask(request);
        const plan = ctx.coordination.getPlan(task.metadata.namespace, task.metadata.name);
        if (!plan) throw new OrkaError("not_found", "no plan found for this task");
        return plan;
      },
    },
  ];
}

