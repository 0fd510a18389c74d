import type { FastifyInstance, FastifyRequest } from "fastify";
import { z } from "zod";
import { pluralOf, type KindName } from "../../resources/kinds.ts";
import { API_VERSION, objectMetaSchema, type Resource } from "../../resources/meta.ts";
import { parseSpec, parseWith } from "../../resources/validate.ts";
import { OrkaError } from "../../util/errors.ts";
import type { Principal } from "../../auth/principal.ts";
import { listResponse, nameFromBody, namespaceField, namespaceOf, pageLimit, principalOf, requiredBody, type ApiContext, type ListQuery } from "../context.ts";
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

/** A request body: {metadata, spec} or {name, spec}, optionally the whole object as GET returned it (its status is ignored). */
const bodySchema = (kind: KindName) =>
  z.strictObject({
    apiVersion: z.literal(API_VERSION).optional(),
    kind: z.literal(kind).optional(),
    ...namespaceField,
    name: z.string().optional(),
    metadata: z.record(z.string(), z.unknown()).optional(),
    spec: z.unknown().optional(),
    status: z.unknown().optional(),
  });

/** Builds the stored form of a Provider/Agent/Tool/Skill from a request body; `name` is the URL's, on update. */
export function objectFromBody(kind: KindName, body: unknown, namespace: string, name?: string): Resource {
  const parsed = parseWith(bodySchema(kind), body);
  const metadata = parseWith(objectMetaSchema, { ...parsed.metadata, name: nameFromBody(parsed.metadata?.name ?? parsed.name, name), namespace }, "metadata");
  if (metadata.name === undefined) throw new OrkaError("invalid_argument", "name is required");
  return { apiVersion: API_VERSION, kind, metadata: metadata as Resource["metadata"], spec: parseSpec(kind, parsed.spec) };
}

export function registerKindRoutes(app: FastifyInstance, ctx: ApiContext, routes: KindRoutes): void {
  const { kind } = routes;
  const base = `/${pluralOf(kind)}`;
  const label = kind.toLowerCase();
  const refuseReserved = (name: string) => {
    const message = routes.reserved?.(name);
    if (message) throw new OrkaError("conflict", message);
  };
  /** Create and update admit an object the same way; on update the name is the URL's. */
  const admit = (request: FastifyRequest, name?: string): Resource => {
    const body = requiredBody(request) as { name?: unknown; metadata?: { name?: unknown } };
    refuseReserved(String(name ?? body.metadata?.name ?? body.name ?? ""));
    const object = objectFromBody(kind, body, namespaceOf(request), name);
    checkReservedMetadata(object.metadata);
    routes.check?.(object, principalOf(request), ctx);
    return object;
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

  app.post(base, async (request, reply) => reply.code(201).send(await ctx.store.create(admit(request))));

  app.put<{ Params: { name: string } }>(`${base}/:name`, async (request) => {
    const object = admit(request, request.params.name);
    const current = await ctx.store.get(kind, object.metadata.namespace, request.params.name);
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
