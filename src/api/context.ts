import type { FastifyRequest } from "fastify";
import { z } from "zod";
import type { Controller } from "../controller/controller.ts";
import type { TaskDataStore } from "../store/data-store.ts";
import type { MemoryStore } from "../store/memory-store.ts";
import type { CoordinationStore } from "../store/coordination-store.ts";
import type { ApprovalStore } from "../store/approval-store.ts";
import type { AuditStore } from "../store/audit-store.ts";
import type { JournalStore } from "../store/journal-store.ts";
import type { ResourceStore } from "../store/resource-store.ts";
import type { OutputGate } from "../store/output-gate.ts";
import { OrkaError } from "../util/errors.ts";
import type { EgressPolicy } from "../policy/ssrf.ts";
import type { TaskSecrets } from "../policy/redact.ts";
import type { CompatAttempts } from "./compat/attempts.ts";
import type { ProviderSettings } from "../controller/resolve.ts";
import { actingNamespace, resolveNamespace, type SignInLimit, type TrustProxy } from "./auth.ts";
import type { Principal } from "../auth/principal.ts";
import type { TokenAuthenticator } from "../auth/static-tokens.ts";
import type { ApiAuthenticator } from "../auth/authenticator.ts";
import type { GrantGate } from "../auth/grant-gate.ts";
import type { NamespaceIsolation } from "../auth/isolation.ts";
import type { ChildTokenExchangeConfig } from "../auth/token-exchange.ts";
import type { GithubSettings } from "../github/settings.ts";
import type { GitSettings } from "../workspace/git.ts";
import type { WorkloadRunner } from "../runner/runner.ts";
import type { StdioServerLauncher } from "../tools/custom/mcp-stdio.ts";

export interface ApiContext {
  store: ResourceStore;
  data: TaskDataStore;
  memory: MemoryStore;
  coordination: CoordinationStore;
  approvals: ApprovalStore;
  audit: AuditStore;
  journal: JournalStore;
  /** Holds replies, stream writes and calls that act until the writes before them are committed. */
  gate: OutputGate;
  controller: Controller;
  /** Static tokens: the admin token and the ones it creates. */
  tokens: TokenAuthenticator;
  authenticator: ApiAuthenticator;
  /** Transaction-token grant checks in the configured mode. */
  grants: GrantGate;
  isolation: NamespaceIsolation;
  /** Failed sign-ins allowed per client and window. */
  signInLimit: SignInLimit;
  /** Whose `X-Forwarded-For` names the client (Fastify's trustProxy). */
  trustProxy: TrustProxy;
  /** RFC 8693 exchange of a narrower transaction token for each delegated child, when configured. */
  childTokenExchange?: ChildTokenExchangeConfig;
  /** Why the server cannot serve yet (starting, a store that cannot be written), or undefined when it is ready. */
  readiness: () => string | undefined;
  /** Told of every error a request failed on, so a failed write marks the store not ready at once. */
  noteFailure: (err: unknown) => void;
  /** What server-side calls (HTTP Tools, webhooks) may reach, whoever made the Tool. */
  egress: EgressPolicy;
  /** Starts stdio MCP Tools' servers in the sandbox; absent, such Tools cannot be called. */
  mcpStdio?: StdioServerLauncher;
  /** Where scripted Providers may read files. */
  providers: ProviderSettings;
  /** The Secret values each Task uses, scrubbed from what its Tools answer. */
  secrets: TaskSecrets;
  /** Which hosts a workspace repository may be on. */
  git: GitSettings;
  /** The attempts' runner: a GitHub tool that needs files beside an attempt (run_validation's checkout) asks it. */
  runner: WorkloadRunner;
  /** How the OpenAI/Anthropic-compatible endpoints call the model, and run their tools as attempts of the runner. */
  compat: CompatAttempts;
  /** Where the GitHub tools' server halves send their requests, the operator's read token and the review-marker keys. */
  github: GithubSettings;
}

declare module "fastify" {
  interface FastifyRequest {
    principal?: Principal;
    /** Why the request was refused, for the audit log. */
    refusal?: string;
  }
}

export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal) throw new OrkaError("unauthenticated", "missing authorization header");
  return request.principal;
}

/** The namespace of an /api/v1 request: ?namespace=, then the body's, then the caller's, then default. */
export function namespaceOf(request: FastifyRequest): string {
  return resolveNamespace(principalOf(request), askedNamespace(request));
}

/** Where a request may name a namespace. */
export type NamespaceSource = Pick<FastifyRequest, "principal" | "query" | "body">;

/** The namespace a request asks for, as its handler will resolve it, without refusing anything. */
export function requestedNamespace(request: NamespaceSource): string | undefined {
  return request.principal ? actingNamespace(request.principal, askedNamespace(request)) : askedNamespace(request);
}

/** ?namespace=, else the body's `namespace` or `metadata.namespace` (which must agree). */
function askedNamespace(request: NamespaceSource): string | undefined {
  const text = (value: unknown) => (typeof value === "string" && value !== "" ? value : undefined);
  const query = (request.query ?? {}) as { namespace?: unknown };
  if (text(query.namespace)) return text(query.namespace);
  const body = (request.body && typeof request.body === "object" && !Buffer.isBuffer(request.body) ? request.body : {}) as {
    namespace?: unknown;
    metadata?: { namespace?: unknown };
  };
  const flat = text(body.namespace);
  const nested = text(body.metadata?.namespace);
  if (flat && nested && flat !== nested) throw new OrkaError("invalid_argument", `namespace "${flat}" and metadata.namespace "${nested}" differ; set one`);
  return flat ?? nested;
}

/** Every body may name its namespace instead of the query; a strict body schema spreads this in. */
export const namespaceField = { namespace: z.string().optional() };

/** The body a create or update needs. The API's content-type parsing has already refused anything but a JSON object. */
export function requiredBody(request: FastifyRequest): Record<string, unknown> {
  if (request.body === undefined) throw new OrkaError("invalid_argument", "request body is required: send a JSON object with Content-Type: application/json");
  return request.body as Record<string, unknown>;
}

/** The name a create or update body gives (flat or in metadata); on update it is the URL's, and a different one is refused. */
export function nameFromBody(given: unknown, urlName?: string): unknown {
  if (urlName !== undefined && given !== undefined && given !== urlName) {
    throw new OrkaError("invalid_argument", `metadata.name "${String(given)}" does not match the name in the URL "${urlName}"; they must agree`);
  }
  return urlName ?? given;
}

export interface ListQuery {
  limit?: string;
  continue?: string;
  labelSelector?: string;
}

/** Page size of a list: default 100, at most 500, below 1 refused; `allowAll` lets 0 mean everything. */
export function pageLimit(query: ListQuery, allowAll = false): number {
  if (query.limit === undefined || query.limit === "") return 100;
  const limit = Number(query.limit);
  if (!Number.isInteger(limit)) throw new OrkaError("invalid_argument", "limit must be an integer between 1 and 500");
  if (limit === 0 && allowAll) return 0;
  if (limit < 1) throw new OrkaError("invalid_argument", "limit must be at least 1");
  return Math.min(limit, 500);
}

export function listResponse<T>(list: { items: T[]; continue?: string; remainingItemCount?: number }) {
  return { items: list.items, metadata: { continue: list.continue ?? "", remainingItemCount: list.remainingItemCount ?? 0 } };
}
