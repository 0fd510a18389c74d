import type { FastifyInstance, FastifyRequest } from "fastify";
import { z } from "zod";
import { describeSecret, secretDocumentSchema, secretSpecFromDocument, type SecretSpec } from "../../resources/secret.ts";
import { parseWith } from "../../resources/validate.ts";
import type { Resource } from "../../resources/meta.ts";
import { OrkaError } from "../../util/errors.ts";
import { requireOperator } from "../auth.ts";
import { namespaceField, namespaceOf, nameFromBody, principalOf, requiredBody, type ApiContext } from "../context.ts";
import { checkReservedMetadata } from "./metadata-rules.ts";

/** The flat `name` and `namespace` a body may give; everything else is the Secret document, checked field by field. */
const secretBody = z.looseObject({ ...namespaceField, name: z.string().optional(), metadata: z.record(z.string(), z.unknown()).optional() });

/** Secrets are written by admin and operator tokens and read back as names, keys and types, never values. */
export function registerSecretRoutes(app: FastifyInstance, ctx: ApiContext): void {
  /** Create and update admit a Secret the same way; on update the name is the URL's. */
  const load = (request: FastifyRequest, namespace: string, name?: string): Resource<SecretSpec> => {
    const { name: flatName, namespace: _namespace, ...body } = parseWith(secretBody, requiredBody(request));
    const document = parseWith(secretDocumentSchema, {
      apiVersion: "v1",
      kind: "Secret",
      type: "Opaque",
      ...body,
      metadata: { ...body.metadata, name: nameFromBody(body.metadata?.name ?? flatName, name), namespace },
    });
    checkReservedMetadata(document.metadata);
    return { apiVersion: "v1", kind: "Secret", metadata: document.metadata as Resource["metadata"], spec: secretSpecFromDocument(document) };
  };

  app.get("/secrets", async (request) => {
    const list = await ctx.store.list<SecretSpec, unknown>("Secret", { namespace: namespaceOf(request) });
    return { items: list.items.map(describeSecret), metadata: { continue: "", remainingItemCount: 0 } };
  });

  app.get<{ Params: { name: string } }>("/secrets/:name", async (request) => {
    const secret = await ctx.store.get<SecretSpec, unknown>("Secret", namespaceOf(request), request.params.name);
    if (!secret) throw new OrkaError("not_found", "secret not found");
    return describeSecret(secret);
  });

  app.post("/secrets", async (request, reply) => {
    const namespace = namespaceOf(request);
    requireOperator(principalOf(request), "creating a secret");
    const secret = load(request, namespace);
    return reply.code(201).send(describeSecret(await ctx.store.create(secret)));
  });

  app.put<{ Params: { name: string } }>("/secrets/:name", async (request) => {
    requireOperator(principalOf(request), "updating a secret");
    const namespace = namespaceOf(request);
    const current = await ctx.store.get<SecretSpec, unknown>("Secret", namespace, request.params.name);
    if (!current) throw new OrkaError("not_found", "secret not found");
    const next = load(request, namespace, request.params.name);
    return describeSecret(await ctx.store.update({ ...current, metadata: { ...current.metadata, labels: next.metadata.labels }, spec: next.spec }));
  });

  app.delete<{ Params: { name: string } }>("/secrets/:name", async (request, reply) => {
    requireOperator(principalOf(request), "deleting a secret");
    await ctx.store.delete("Secret", namespaceOf(request), request.params.name);
    return reply.code(204).send();
  });
}
