import type { FastifyInstance } from "fastify";
import { z } from "zod";
import { pluralOf, type KindName } from "../../resources/kinds.ts";
import { API_VERSION, objectMetaSchema, type Resource } from "../../resources/meta.ts";
import { parseSpec, parseWith } from "../../resources/validate.ts";
import { OrkaError } from "../../util/errors.ts";
import type { Principal } from "../../auth/principal.ts";
import { listResponse, namespaceOf, pageLimit, principalOf, type ApiContext, type ListQuery } from "../context.ts";
import { checkReservedMetadata } from "./metadata-rules.ts";

export interface KindRoutes {
  kind: Exclude<KindName, "Secret" | "Task">;
  /** Refuses what only an operator may set, or other kind-specific rules. */
  check?: (object: Resource, principal: Principal, ctx: ApiContext) => void;
  /** Overrides GET list / GET one (the Tools endpoint merges built-ins in). */
  list?: (ctx: ApiContext, namespace: string, principal: Principal) => Promise<unknown>;
  get?: (ctx: ApiContext, namespace: string, name: string) => Promise<unknown>;
  /** Names that cannot be created, updated or deleted, with the message to give. */
  reserved?: (name: string) => string | undefined;
}

const bodySchema = z.looseObject({
  name: z.string().optional(),
  namespace: z.string().optional(),
  metadata: z.looseObject({}).optional(),
  spec: z.unknown().optional(),
});

/** Builds the stored form of a Provider/Agent/Tool/Skill from a request body: {metadata, spec} or {name, spec}. */
export function objectFromBody(kind: KindName, body: unknown, namespace: string, name?: string): Resource {
  const parsed = parseWith(bodySchema, body ?? {});
  const metadata = parseWith(
    objectMetaSchema,
    { ...parsed.metadata, name: name ?? parsed.metadata?.name ?? parsed.name, namespace },
    "metadata",
  );
  if (metadata.name === undefined) throw new OrkaError("invalid_argument", "name is required");
  return { apiVersion: API_VERSION, kind, metadata: metadata as Resource["metadata"], spec: parseSpec(kind, parsed.spec) };
}

export function registerKindRoutes(app: FastifyInstance, ctx: ApiContext, routes: KindRoutes): void {
  const { kind } = routes;
  const base = `/api/v1/${pluralOf(kind)}`;
  const label = kind.toLowerCase();
  const refuseReserved = (name: string) => {
    const message = routes.reserved?.(name);
    if (message) throw new OrkaError("conflict", message);
  };

  app.get(base, async (request) => {
    const namespace = namespaceOf(request);
    if (routes.list) return routes.list(ctx, namespace, principalOf(request));
    const query = request.query as ListQuery;
    return listResponse(await ctx.store.list(kind, { namespace, limit: pageLimit(query), continue: query.continue, labelSelector: query.labelSelector }));
  });

  app.get<{ Params: { name: string } }>(`${base}/:name`, async (request) => {
    const namespace = namespaceOf(request);
    if (routes.get) return routes.get(ctx, namespace, request.params.name);
    const object = await ctx.store.get(kind, namespace, request.params.name);
    if (!object) throw new OrkaError("not_found", `${label} not found`);
    return object;
  });

  app.post(base, async (request, reply) => {
    const body = request.body as { name?: unknown; metadata?: { name?: unknown } };
    const namespace = namespaceOf(request);
    refuseReserved(String(body?.metadata?.name ?? body?.name ?? ""));
    const object = objectFromBody(kind, request.body, namespace);
    checkReservedMetadata(object.metadata);
    routes.check?.(object, principalOf(request), ctx);
    return reply.code(201).send(await ctx.store.create(object));
  });

  app.put<{ Params: { name: string } }>(`${base}/:name`, async (request) => {
    const namespace = namespaceOf(request);
    refuseReserved(request.params.name);
    const object = objectFromBody(kind, request.body, namespace, request.params.name);
    checkReservedMetadata(object.metadata);
    routes.check?.(object, principalOf(request), ctx);
    const current = await ctx.store.get(kind, namespace, request.params.name);
    if (!current) throw new OrkaError("not_found", `${label} not found`);
    return ctx.store.update({
      ...current,
      metadata: {
        ...current.metadata,
        labels: object.metadata.labels ?? current.metadata.labels,
        annotations: object.metadata.annotations ?? current.metadata.annotations,
        resourceVersion: object.metadata.resourceVersion,
      },
      spec: object.spec,
    });
  });

  app.delete<{ Params: { name: string } }>(`${base}/:name`, async (request, reply) => {
    const namespace = namespaceOf(request);
    refuseReserved(request.params.name);
    await ctx.store.delete(kind, namespace, request.params.name);
    return reply.code(204).send();
  });
}
