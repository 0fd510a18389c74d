import type { FastifyInstance, FastifyRequest } from "fastify";
import { z } from "zod";
import { createProposal, MAX_CONTENT_CHARS, proposalInputSchema, redactRequired, stringList } from "../../memory/rules.ts";
import { parseWith } from "../../resources/validate.ts";
import { canReviewMemory } from "../../auth/principal.ts";
import { OrkaError } from "../../util/errors.ts";
import { namespaceField, namespaceOf, principalOf, requiredBody, type ApiContext } from "../context.ts";

type IdParams = { id: string };

const limitText = (fallback: number, max: number) =>
  z
    .string()
    .optional()
    .transform((value, issue) => {
      if (value === undefined || value === "") return fallback;
      const n = Number(value);
      if (!Number.isInteger(n) || n < 0) {
        issue.addIssue({ code: "custom", message: "invalid limit" });
        return z.NEVER;
      }
      return Math.min(n === 0 ? fallback : n, max);
    });
const flag = z.enum(["true", "false"]).optional().transform((v) => v === "true");

const memoryQuery = z.object({
  query: z.string().optional(),
  q: z.string().optional(),
  tags: stringList.optional(),
  ids: stringList.optional(),
  taskName: z.string().optional(),
  agentName: z.string().optional(),
  source: z.string().optional(),
  includeDisabled: flag,
  includeDeleted: flag,
  limit: limitText(100, 500),
});

const memoryBody = z.strictObject({
  ...namespaceField,
  content: z.string().max(MAX_CONTENT_CHARS, `content must be at most ${MAX_CONTENT_CHARS} characters`).optional(),
  tags: stringList.optional(),
  agentName: z.string().optional(),
  taskName: z.string().optional(),
  source: z.enum(["task", "session", "user", "system", "memory_proposal", "e2e", "manual"]).optional(),
  disabled: z.boolean().optional(),
  deleted: z.boolean().optional(),
});

/** A PUT that names nothing to change would answer 200 having done nothing: say what it may carry. */
const memoryUpdateBody = memoryBody.refine((body) => Object.keys(body).some((key) => key !== "namespace"), {
  message: "send a JSON body with at least one field to change: content, tags, agentName, taskName, source, disabled or deleted",
});

const proposalBody = z.strictObject({ ...namespaceField, ...proposalInputSchema.shape });

const proposalQuery = z.object({
  taskName: z.string().optional(),
  agentName: z.string().optional(),
  type: z.string().optional(),
  status: z.string().optional(),
  query: z.string().optional(),
  q: z.string().optional(),
  limit: limitText(100, 500),
});

const reviewBody = z.strictObject({ ...namespaceField, status: z.string().optional(), reviewer: z.string().max(200).optional(), reviewNote: z.string().max(4000).optional() });

/** Review and apply are a person's decision: admin, reviewer or `orka:memory:review`, never a worker's credential. */
function requireReviewer(request: FastifyRequest): string {
  const principal = principalOf(request);
  if (!canReviewMemory(principal)) throw new OrkaError("permission_denied", "reviewing memory proposals needs a reviewer or admin token");
  return principal.name;
}

/** /api/v1/memories and /api/v1/memory-proposals, and session listing. */
export function registerMemoryRoutes(app: FastifyInstance, ctx: ApiContext): void {
  const memory = ctx.memory;
  const loadMemory = (namespace: string, id: string) => {
    const found = memory.getMemory(namespace, id);
    if (!found || found.deleted) throw new OrkaError("not_found", "memory not found");
    return found;
  };

  app.get("/memories", async (request) => {
    const namespace = namespaceOf(request);
    const q = parseWith(memoryQuery, request.query);
    return { items: memory.recall(namespace, { ...q, query: q.query ?? q.q }), metadata: {} };
  });

  app.post("/memories", async (request, reply) => {
    const namespace = namespaceOf(request);
    const body = parseWith(memoryBody, request.body ?? {});
    if (!body.content?.trim()) throw new OrkaError("invalid_argument", "content is required");
    const created = memory.createMemory(namespace, {
      content: redactRequired("content", body.content),
      source: body.source ?? "manual",
      tags: body.tags,
      agentName: body.agentName,
      taskName: body.taskName,
    });
    return reply.code(201).send(created);
  });

  app.get<{ Params: IdParams }>("/memories/:id", async (request) => loadMemory(namespaceOf(request), request.params.id));

  app.put<{ Params: IdParams }>("/memories/:id", async (request) => {
    const namespace = namespaceOf(request);
    const body = parseWith(memoryUpdateBody, requiredBody(request));
    loadMemory(namespace, request.params.id);
    return memory.updateMemory(namespace, request.params.id, { ...body, content: body.content ? redactRequired("content", body.content) : undefined });
  });

  app.delete<{ Params: IdParams }>("/memories/:id", async (request, reply) => {
    const namespace = namespaceOf(request);
    loadMemory(namespace, request.params.id);
    memory.updateMemory(namespace, request.params.id, { deleted: true, disabled: true });
    return reply.code(204).send();
  });

  for (const [verb, disabled] of [["disable", true], ["enable", false]] as const) {
    app.post<{ Params: IdParams }>(`/memories/:id/${verb}`, async (request, reply) => {
      memory.setMemoryDisabled(namespaceOf(request), request.params.id, disabled);
      return reply.code(204).send();
    });
  }

  app.get("/memory-proposals", async (request) => {
    const namespace = namespaceOf(request);
    const q = parseWith(proposalQuery, request.query);
    return { items: memory.listProposals(namespace, { ...q, query: q.query ?? q.q }), metadata: {} };
  });

  app.post("/memory-proposals", async (request, reply) => {
    const namespace = namespaceOf(request);
    const { namespace: _namespace, ...proposal } = parseWith(proposalBody, request.body ?? {});
    return reply.code(201).send(createProposal(memory, namespace, proposal));
  });

  app.get<{ Params: IdParams }>("/memory-proposals/:id", async (request) => {
    const found = memory.getProposal(namespaceOf(request), request.params.id);
    if (!found) throw new OrkaError("not_found", "memory proposal not found");
    return found;
  });

  app.post<{ Params: IdParams }>("/memory-proposals/:id/review", async (request, reply) => {
    const namespace = namespaceOf(request);
    const reviewer = requireReviewer(request);
    const body = parseWith(reviewBody, request.body ?? {});
    memory.reviewProposal(namespace, request.params.id, {
      status: body.status ?? "",
      reviewer: body.reviewer ? redactRequired("reviewer", body.reviewer) : reviewer,
      reviewNote: body.reviewNote,
    });
    return reply.code(204).send();
  });

  app.post<{ Params: IdParams }>("/memory-proposals/:id/apply", async (request) => {
    const namespace = namespaceOf(request);
    const reviewer = requireReviewer(request);
    const body = parseWith(z.strictObject({ ...namespaceField, appliedBy: z.string().max(200).optional() }), request.body ?? {});
    return memory.applyProposal(namespace, request.params.id, body.appliedBy ?? reviewer);
  });

  app.post<{ Params: IdParams }>("/memory-proposals/:id/archive", async (request, reply) => {
    const namespace = namespaceOf(request);
    requireReviewer(request);
    memory.archiveProposal(namespace, request.params.id);
    return reply.code(204).send();
  });

  app.get("/sessions", async (request) => ({ items: memory.listSessions(namespaceOf(request)), metadata: {} }));

  app.get<{ Params: { name: string } }>("/sessions/:name", async (request) => {
    const namespace = namespaceOf(request);
    if (!memory.sessionExists(namespace, request.params.name)) throw new OrkaError("not_found", "session not found");
    return { name: request.params.name, messages: memory.transcript(namespace, request.params.name, 1000) };
  });
}
