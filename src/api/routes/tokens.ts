import type { FastifyInstance } from "fastify";
import { z } from "zod";
import { TOKEN_ROLES } from "../../auth/principal.ts";
import { namespaceName } from "../../resources/meta.ts";
import { parseWith } from "../../resources/validate.ts";
import { requireAdmin } from "../auth.ts";
import { principalOf, type ApiContext } from "../context.ts";

const tokenName = z.string().min(1).max(100);
const createBody = z.strictObject({ name: tokenName, namespace: namespaceName, role: z.enum(TOKEN_ROLES).default("user") });

/**
 * Who the caller is, and namespace-bound API tokens: the admin creates, lists and revokes them; a value is
 * shown once, at creation.
 */
export function registerTokenRoutes(app: FastifyInstance, ctx: ApiContext): void {
  app.get("/auth/validate", async () => ({ authenticated: true }));
  app.get("/auth/whoami", async (request) => {
    const principal = principalOf(request);
    return {
      name: principal.name,
      admin: principal.admin,
      role: principal.role,
      namespace: principal.namespace ?? principal.transaction?.context.namespace ?? null,
      ...(principal.transaction ? { transaction: { id: principal.transaction.id, scopes: principal.transaction.scopes } } : {}),
    };
  });

  app.post("/auth/tokens", async (request, reply) => {
    requireAdmin(principalOf(request), "creating a token");
    const body = parseWith(createBody, request.body ?? {});
    return reply.code(201).send({ ...body, token: ctx.tokens.createToken(body.name, body.namespace, body.role) });
  });

  app.get("/auth/tokens", async (request) => {
    requireAdmin(principalOf(request), "listing tokens");
    return { items: ctx.tokens.listTokens() };
  });

  app.delete<{ Params: { name: string } }>("/auth/tokens/:name", async (request, reply) => {
    requireAdmin(principalOf(request), "revoking a token");
    ctx.tokens.revokeToken(parseWith(tokenName, request.params.name, "name"));
    return reply.code(204).send();
  });
}
