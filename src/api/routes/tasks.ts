import { randomBytes } from "node:crypto";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { z } from "zod";
import { ANNOTATION, API_VERSION, FINALIZER_CLEANUP, childrenOf, objectMetaSchema, objectName, type Resource } from "../../resources/meta.ts";
import { replayProviderFrom } from "../../controller/recording.ts";
import { SERVER_STAMPED_TASK_FIELDS, isTerminal, taskSpecSchema, type TaskSpec, type TaskStatus } from "../../resources/task.ts";
import { parseWith } from "../../resources/validate.ts";
import { isDuration } from "../../util/duration.ts";
import { validateWorkspace } from "../../resources/workspace.ts";
import { checkRepositoryHosts } from "../../workspace/hosts.ts";
import { OrkaError } from "../../util/errors.ts";
import { listResponse, nameFromBody, namespaceField, namespaceOf, pageLimit, principalOf, requiredBody, type ApiContext, type ListQuery } from "../context.ts";
import { openSse } from "../sse.ts";
import type { ResourceStore } from "../../store/resource-store.ts";
import type { ExecutionEvent } from "../../store/data-store.ts";
import { checkReservedMetadata, hasUserinfo } from "./metadata-rules.ts";
import { resolveTaskFacts } from "../../controller/task-tools.ts";
import { stampTransaction } from "../../auth/provenance.ts";
import { checkReferences } from "../../auth/isolation.ts";
import { acceptedStatus, createdEvent } from "../../controller/task/acceptance.ts";

type Task = Resource<TaskSpec, TaskStatus>;
const SPEC_FIELDS = Object.keys(taskSpecSchema.shape);
const anyValue = z.unknown().optional();
/** Flat fields (spec fields, name, namespace, labels, annotations) or {metadata, spec}, or the Task as GET returned it (its status and plan are ignored). */
const bodySchema = z.strictObject({
  ...Object.fromEntries(SPEC_FIELDS.map((field) => [field, anyValue])),
  apiVersion: z.literal(API_VERSION).optional(),
  kind: z.literal("Task").optional(),
  ...namespaceField,
  name: anyValue,
  labels: anyValue,
  annotations: anyValue,
  metadata: z.record(z.string(), z.unknown()).optional(),
  spec: z.record(z.string(), z.unknown()).optional(),
  status: anyValue,
  plan: anyValue,
});

/**
 * A Task from a create or update body, given flat (`{name, type, prompt}`, whose fields win) or as
 * `{metadata, spec}`; its checks run in a fixed order, so a body with several faults is always
 * refused for the same one first; on update, `name` is the URL's.
 */
export function taskFromBody(body: unknown, namespace: string, name?: string): Task {
  const parsed = parseWith(bodySchema, body) as Record<string, unknown> & { metadata?: Record<string, unknown>; spec?: Record<string, unknown> };
  const spec: Record<string, unknown> = { ...parsed.spec };
  for (const field of SPEC_FIELDS) if (parsed[field] !== undefined) spec[field] = parsed[field];
  if (typeof spec.agentRef === "string") spec.agentRef = { name: spec.agentRef };
  const metadata = {
    ...parsed.metadata,
    name: nameFromBody(parsed.name ?? parsed.metadata?.name, name),
    namespace,
    labels: parsed.labels ?? parsed.metadata?.labels,
    annotations: parsed.annotations ?? parsed.metadata?.annotations,
  };
  if (!metadata.name) throw new OrkaError("invalid_argument", "name is required");
  if (!spec.type) throw new OrkaError("invalid_argument", "type is required");
  if (spec.timeout !== undefined && (typeof spec.timeout !== "string" || !isDuration(spec.timeout))) {
    throw new OrkaError("invalid_argument", `invalid timeout: "${String(spec.timeout)}" (use a duration such as 30s or 10m)`);
  }
  for (const field of SERVER_STAMPED_TASK_FIELDS) {
    if (spec[field] !== undefined) throw new OrkaError("invalid_argument", `${field} cannot be set by clients`);
  }
  if (hasUserinfo(spec.webhookURL as string | undefined)) throw new OrkaError("invalid_argument", "webhookURL must not contain credentials");
  const meta = parseWith(objectMetaSchema, metadata, "metadata");
  checkReservedMetadata(meta);
  const { ownerReferences: _o, finalizers: _f, uid: _u, resourceVersion: _r, ...clientMeta } = meta;
  const taskSpec = parseWith(taskSpecSchema, spec, "spec");
  if (taskSpec.workspace) taskSpec.workspace = validateWorkspace(taskSpec.workspace);
  return { apiVersion: API_VERSION, kind: "Task", metadata: clientMeta as Task["metadata"], spec: taskSpec };
}

/** The Task by name, or a 404. */
export async function loadTask(store: ResourceStore, namespace: string, name: string): Promise<Task> {
  const task = await store.get<TaskSpec, TaskStatus>("Task", namespace, name);
  if (!task) throw new OrkaError("not_found", "task not found");
  return task;
}

/** A Task that has finished, or is gone: nothing more will happen to it. */
export function isTaskDone(task: Task | undefined): boolean {
  return !task || isTerminal(task);
}

export function registerTaskRoutes(app: FastifyInstance, ctx: ApiContext): void {
  const load = (namespace: string, name: string) => loadTask(ctx.store, namespace, name);

  /** The Task's references as they resolve now (its Agent's Provider included), which the caller must be allowed to make. */
  const checkResolvedReferences = async (request: FastifyRequest, task: Task) => {
    const facts = await resolveTaskFacts(ctx.store, task);
    checkReferences(ctx.isolation, principalOf(request), task.metadata.namespace, facts.dependencies);
    return facts;
  };

  /**
   * Every way a person creates a Task (a create body or a fork of another Task) ends here: its references checked
   * as resolved, provenance stamped, the transaction's grant checked, then stored.
   */
  const createAs = async (request: FastifyRequest, task: Task) => {
    const principal = principalOf(request);
    const facts = await checkResolvedReferences(request, task);
    // Provenance is stamped by the server (clients may not set it); children inherit it.
    task.spec.requestedBy = principal.requestedBy;
    if (principal.transaction) {
      const site = { method: request.method, path: request.url.split("?")[0], principal: principal.name, namespace: task.metadata.namespace };
      ctx.grants.task(principal.transaction, "createTask", facts, site);
      stampTransaction(task.spec, task.metadata, principal.transaction);
    }
    checkRepositoryHosts(task.spec.workspace, ctx.git.allowedHosts);
    // Stored with the cleanup finalizer and the Pending status the controller would write first: two writes
    // and two reconcile passes fewer per Task.
    task.metadata.finalizers = [FINALIZER_CLEANUP];
    task.status = acceptedStatus();
    const created = await ctx.store.create(task);
    ctx.data.appendEvent(created.metadata.namespace, created.metadata.name, createdEvent(created));
    return created;
  };

  app.post("/tasks", async (request, reply) => reply.code(201).send(await createAs(request, taskFromBody(requiredBody(request), namespaceOf(request)))));

  // A new Task that continues a journalled run from one of its steps, optionally with another model.
  app.post<{ Params: { name: string } }>("/tasks/:name/fork", async (request, reply) => {
    const namespace = namespaceOf(request);
    const body = parseWith(
      z.strictObject({ ...namespaceField, name: objectName.optional(), at: z.number().int().min(1, "at is a step number, 1 or more"), model: z.string().min(1).optional(), run: z.number().int().positive().optional() }),
      request.body ?? {},
    );
    const source = await load(namespace, request.params.name);
    if (source.spec.type !== "ai") throw new OrkaError("invalid_argument", "only ai Tasks have a journal to fork");
    const run = body.run ?? source.status?.journalRun;
    const steps = run === undefined ? 0 : ctx.journal.steps(source.metadata.uid!, run).length;
    if (run === undefined || steps === 0) throw new OrkaError("not_found", "task has no journalled run to fork");
    if (body.at > steps) throw new OrkaError("invalid_argument", `run ${run} of ${source.metadata.name} has ${steps} steps; at must be between 1 and ${steps}`);
    const { requestedBy: _r, transaction: _t, ...spec } = source.spec;
    const fork: Task = {
      apiVersion: API_VERSION,
      kind: "Task",
      metadata: {
        name: body.name ?? `${source.metadata.name.slice(0, 200)}-fork-${randomBytes(3).toString("hex").slice(0, 5)}`,
        namespace,
        labels: Object.fromEntries(Object.entries(source.metadata.labels ?? {}).filter(([k]) => !k.startsWith("orka.ai/"))),
        annotations: { [ANNOTATION.forkedFrom]: `${source.metadata.name}/${source.metadata.uid}/${run}/${body.at}` },
      },
      spec: { ...spec, ...(body.model ? { ai: { ...spec.ai, model: body.model } } : {}) },
    };
    return reply.code(201).send(await createAs(request, fork));
  });

  app.get("/tasks", async (request) => {
    const query = request.query as ListQuery & { status?: string };
    const list = await ctx.store.list<TaskSpec, TaskStatus>("Task", {
      namespace: namespaceOf(request),
      limit: pageLimit(query, true),
      continue: query.continue,
      labelSelector: query.labelSelector,
    });
    return listResponse(list);
  });

  app.get<{ Params: { name: string } }>("/tasks/:name", async (request) => {
    const task = await load(namespaceOf(request), request.params.name);
    const plan = ctx.coordination.getPlan(task.metadata.namespace, task.metadata.name);
    return plan
      ? { ...task, plan: { summary: plan.summary, progressPct: plan.progressPct, goalComplete: plan.goalComplete, planDocument: plan.planDocument, iteration: plan.iteration } }
      : task;
  });

  // The reference's plan endpoint speaks PascalCase; kept as is for its clients.
  app.get<{ Params: { name: string } }>("/tasks/:name/plan", async (request) => {
    const namespace = namespaceOf(request);
    await load(namespace, request.params.name);
    const plan = ctx.coordination.getPlan(namespace, request.params.name);
    if (!plan) throw new OrkaError("not_found", "no plan found for this task");
    return {
      TaskName: plan.task,
      Namespace: plan.namespace,
      Iteration: plan.iteration,
      Summary: plan.summary,
      ProgressPct: plan.progressPct,
      GoalComplete: plan.goalComplete,
      PlanDocument: plan.planDocument,
      CreatedAt: plan.createdAt,
      UpdatedAt: plan.updatedAt,
    };
  });

  app.put<{ Params: { name: string } }>("/tasks/:name", async (request) => {
    const namespace = namespaceOf(request);
    const current = await load(namespace, request.params.name);
    const next = taskFromBody(requiredBody(request), namespace, request.params.name);
    if (next.spec.type !== current.spec.type) throw new OrkaError("invalid_argument", "spec.type is immutable");
    checkRepositoryHosts(next.spec.workspace, ctx.git.allowedHosts);
    await checkResolvedReferences(request, next);
    const protectedLabels = Object.fromEntries(Object.entries(current.metadata.labels ?? {}).filter(([k]) => k.startsWith("orka.ai/")));
    const protectedAnnotations = Object.fromEntries(Object.entries(current.metadata.annotations ?? {}).filter(([k]) => k.startsWith("orka.ai/")));
    return ctx.store.update({
      ...current,
      metadata: {
        ...current.metadata,
        labels: { ...next.metadata.labels, ...protectedLabels },
        annotations: { ...next.metadata.annotations, ...protectedAnnotations },
        resourceVersion: (request.body as { metadata?: { resourceVersion?: string } })?.metadata?.resourceVersion,
      },
      spec: { ...next.spec, requestedBy: current.spec.requestedBy, transaction: current.spec.transaction },
    });
  });

  app.delete<{ Params: { name: string } }>("/tasks/:name", async (request, reply) => {
    await ctx.store.delete("Task", namespaceOf(request), request.params.name);
    return reply.code(204).send();
  });

  app.post<{ Params: { name: string } }>("/tasks/:name/cancel", async (request) => {
    const namespace = namespaceOf(request);
    const { reason } = parseWith(z.strictObject({ ...namespaceField, reason: z.string().max(1024).optional() }), request.body ?? {});
    await load(namespace, request.params.name);
    const phase = await ctx.controller.cancel(namespace, request.params.name, reason ? `cancelled: ${reason}` : "task cancelled");
    return { taskName: request.params.name, phase };
  });

  app.get<{ Params: { name: string } }>("/tasks/:name/result", async (request) => {
    const namespace = namespaceOf(request);
    await load(namespace, request.params.name);
    const result = ctx.data.getResult(namespace, request.params.name);
    if (result === undefined) throw new OrkaError("not_found", "task has no result");
    return { result };
  });

  app.get<{ Params: { name: string }; Querystring: { follow?: string } }>("/tasks/:name/logs", async (request, reply) => {
    const namespace = namespaceOf(request);
    const name = request.params.name;
    await load(namespace, name);
    if (!ctx.data.latestAttempt(namespace, name)) throw new OrkaError("not_found", "task is pending, no logs available yet");
    if (request.query.follow !== "true") return { logs: ctx.data.readLogs(namespace, name).text };
    const stream = openSse(request, reply);
    let lastId = 0;
    const flush = () => {
      const next = ctx.data.readLogs(namespace, name, lastId);
      lastId = next.lastId;
      if (next.text) stream.send("log", { text: next.text });
    };
    flush();
    const unsubscribe = ctx.data.onLog(namespace, name, flush);
    const poll = setInterval(async () => {
      if (isTaskDone(await ctx.store.get("Task", namespace, name))) {
        flush();
        stream.send("stream_complete", {});
        stream.close();
      }
    }, 500);
    stream.onClose(() => {
      unsubscribe();
      clearInterval(poll);
    });
  });

  app.get<{ Params: { name: string }; Querystring: { after?: string; limit?: string; type?: string } }>(
    "/tasks/:name/events",
    async (request) => {
      const namespace = namespaceOf(request);
      const name = request.params.name;
      await load(namespace, name);
      const after = Number(request.query.after ?? 0);
      if (!Number.isInteger(after) || after < 0) throw new OrkaError("invalid_argument", "after must be a non-negative integer");
      const limit = pageLimit({ limit: request.query.limit });
      const events = ctx.data.listEvents(namespace, name, { after, limit, type: request.query.type });
      return { namespace, streamType: "task", streamID: name, afterSeq: after, latestSeq: ctx.data.latestEventSeq(namespace, name), events };
    },
  );

  app.get<{ Params: { name: string }; Querystring: { after?: string } }>("/tasks/:name/stream", async (request, reply) => {
    const namespace = namespaceOf(request);
    const name = request.params.name;
    // The Task as last written, kept from the store's watch so that a check on every event reads nothing;
    // a write seen while the first read (a missing Task is a 404) is under way is newer than what it answers.
    let task: Task | undefined;
    let written = false;
    const unwatch = ctx.store.watch(({ type, object }) => {
      if (object.kind !== "Task" || object.metadata.namespace !== namespace || object.metadata.name !== name) return;
      task = type === "DELETED" ? undefined : (object as Task);
      written = true;
    });
    const first = await load(namespace, name).catch((err: unknown) => {
      unwatch();
      throw err;
    });
    if (!written) task = first;
    const stream = openSse(request, reply);
    let lastSeq = Number(request.headers["last-event-id"] ?? request.query.after ?? 0) || 0;
    const send = (event: ExecutionEvent) => {
      stream.send("execution_event", event, event.seq);
      lastSeq = event.seq;
    };
    const flush = () => {
      for (const event of ctx.data.listEvents(namespace, name, { after: lastSeq })) send(event);
    };
    const finishIfDone = () => {
      if (!isTaskDone(task)) return;
      flush();
      stream.send("stream_complete", { lastSeq, type: task?.status?.phase ?? "Deleted" });
      stream.close();
    };
    flush();
    // An event that follows on from the last one sent goes out as notified; after a gap (a resumed
    // stream), the events table fills it; one sent already is not sent again.
    const unsubscribe = ctx.data.onEvent(namespace, name, (event, previousSeq) => {
      if (previousSeq === lastSeq) send(event);
      else if (event.seq > lastSeq) flush();
      finishIfDone();
    });
    const poll = setInterval(finishIfDone, 1000);
    stream.onClose(() => {
      unsubscribe();
      unwatch();
      clearInterval(poll);
    });
    finishIfDone();
  });

  app.get<{ Params: { name: string } }>("/tasks/:name/children", async (request) => {
    const namespace = namespaceOf(request);
    await load(namespace, request.params.name);
    const list = await ctx.store.list<TaskSpec, TaskStatus>("Task", { namespace, labelSelector: childrenOf(request.params.name) });
    return listResponse(list);
  });

  // A finished run as a `replay` Provider: apply it, point a Task at it, and the run plays back offline.
  app.get<{ Params: { name: string }; Querystring: { run?: string; provider?: string } }>("/tasks/:name/export", async (request) => {
    const namespace = namespaceOf(request);
    const task = await load(namespace, request.params.name);
    const query = parseWith(z.object({ run: z.coerce.number().int().positive().optional(), provider: objectName.optional() }), request.query ?? {});
    const run = query.run ?? task.status?.journalRun;
    if (run === undefined) throw new OrkaError("not_found", "task has not run yet: nothing to export");
    const steps = ctx.journal.steps(task.metadata.uid!, run);
    if (!steps.some((s) => s.kind === "response")) throw new OrkaError("not_found", `run ${run} has no recorded model turn`);
    return replayProviderFrom(steps, { task: task.metadata.name, namespace, run }, query.provider ?? `${task.metadata.name}-replay`.slice(0, 253));
  });

  app.get<{ Params: { name: string } }>("/tasks/:name/artifacts", async (request) => {
    const namespace = namespaceOf(request);
    await load(namespace, request.params.name);
    return { items: ctx.data.listArtifacts(namespace, request.params.name) };
  });

  app.get<{ Params: { name: string; file: string } }>("/tasks/:name/artifacts/:file", async (request, reply) => {
    const namespace = namespaceOf(request);
    await load(namespace, request.params.name);
    const content = ctx.data.getArtifact(namespace, request.params.name, request.params.file);
    if (!content) throw new OrkaError("not_found", "artifact not found");
    return reply
      .header("content-type", "application/octet-stream")
      .header("content-disposition", `attachment; filename="${request.params.file.replace(/"/g, "")}"`)
      .send(content);
  });
}
