import { OrkaError } from "../util/errors.ts";
import type { NamespaceReference } from "./isolation.ts";
import { contextList, type TransactionClaims } from "./transaction-token.ts";

/** Why a transaction token was refused; these go to the audit log, never to the caller. */
export type GrantReason =
  | "missing_scope"
  | "namespace_mismatch"
  | "task_identity"
  | "task_type"
  | "agent_not_allowed"
  | "provider_not_allowed"
  | "model_not_allowed"
  | "workspace_not_allowed"
  | "tool_not_allowed"
  | "credential_not_allowed";

export interface GrantFailure {
  reason: GrantReason;
  detail: string;
}

/** Thrown in enforce mode; an API caller's message names only the action, the audit reason says why. */
export class GrantRefused extends OrkaError {
  readonly auditReason: string;
  constructor(action: string, failures: GrantFailure[], message = `context token is not authorized for ${action}`) {
    super("permission_denied", message);
    this.auditReason = `${action}: ${failures.map((f) => `${f.reason}: ${f.detail}`).join("; ")}`;
  }
}

export const CREDENTIALS_SCOPE = "orka:secrets:credentials:read";

/** Holding any one scope of the (possibly replaced) list is enough. */
export function hasScope(claims: TransactionClaims, scope: string, overrides: Record<string, string[]>): boolean {
  return (overrides[scope] ?? [scope]).some((s) => claims.scopes.includes(s));
}

/** Scope and namespace: every scoped operation needs its scope and must stay in `tctx.namespace`. */
export function operationFailures(
  claims: TransactionClaims,
  scope: string | undefined,
  namespace: string | undefined,
  overrides: Record<string, string[]>,
): GrantFailure[] {
  const failures: GrantFailure[] = [];
  if (scope && !hasScope(claims, scope, overrides)) failures.push({ reason: "missing_scope", detail: `scope "${scope}" is required` });
  const bound = claims.context.namespace;
  if (scope && namespace !== undefined && bound !== undefined && namespace !== bound) {
    failures.push({ reason: "namespace_mismatch", detail: `namespace "${namespace}" is outside the token's namespace "${bound}"` });
  }
  return failures;
}

/** The resolved facts of a Task about to be created or started, for the grant and reference checks. */
export interface TaskFacts {
  name: string;
  namespace: string;
  type: string;
  agent?: { name: string; namespace: string };
  /** Primary provider first, then fallbacks. */
  models: { provider: string; providerNamespace: string; model?: string }[];
  workspace?: { repo?: string; branch?: string; ref?: string; publicationRepo?: string; pushBranch?: string };
  /** The effective tool set (selected and automatically added tools), or "unrestricted" for a coding-agent runtime without a tool list. */
  tools: string[] | "unrestricted";
  /** Secrets that would supply credentials: workspace credential refs and HTTP Tool auth Secrets. */
  credentialSecrets: string[];
  /** Every dependency (Agent, Provider) as resolved, with the field that leads to it. */
  dependencies: NamespaceReference[];
  isChild: boolean;
}

const qualified = (namespace: string, name: string) => `${namespace}/${name}`;
const matchesRef = (entry: string, namespace: string, name: string) => entry === name || entry === qualified(namespace, name);
const normalizeRepo = (repo: string) => repo.trim().replace(/\/+$/, "").replace(/\.git$/, "").toLowerCase();

/** Every grant check, in order, for one Task and one token context. Pure: the API, delegation and the worker share it. */
export function taskGrantFailures(claims: TransactionClaims, facts: TaskFacts, overrides: Record<string, string[]>): GrantFailure[] {
  const context = claims.context;
  const failures: GrantFailure[] = [];
  const fail = (reason: GrantReason, detail: string) => failures.push({ reason, detail });

  if (context.taskName !== undefined && context.taskName !== facts.name) fail("task_identity", `task name "${facts.name}" is not "${context.taskName}"`);
  if (context.task !== undefined && !matchesRef(context.task, facts.namespace, facts.name)) fail("task_identity", `task "${facts.name}" is not "${context.task}"`);

  const bound = context.namespace;
  if (bound !== undefined) {
    for (const namespace of [facts.namespace, ...facts.dependencies.map((d) => d.namespace)]) {
      if (namespace !== bound) fail("namespace_mismatch", `namespace "${namespace}" is outside the token's namespace "${bound}"`);
    }
  }

  if (context.taskType !== undefined && context.taskType !== facts.type) fail("task_type", `task type "${facts.type}" is not "${context.taskType}"`);

  const allowedAgents = contextList(context, "allowedAgents");
  if ((context.agent !== undefined || allowedAgents !== undefined) && !facts.agent) fail("agent_not_allowed", "an agent is required by the token context");
  if (facts.agent) {
    const { name, namespace } = facts.agent;
    if (context.agent !== undefined && !matchesRef(context.agent, namespace, name)) fail("agent_not_allowed", `agent "${name}" is not "${context.agent}"`);
    if (allowedAgents && !allowedAgents.some((a) => matchesRef(a, namespace, name))) fail("agent_not_allowed", `agent "${name}" is not in allowedAgents`);
  }

  const allowedProviders = contextList(context, "allowedProviders");
  const allowedModels = contextList(context, "allowedModels");
  for (const { provider, providerNamespace, model } of facts.models) {
    const providerOk = (context.provider === undefined || matchesRef(context.provider, providerNamespace, provider))
      && (!allowedProviders || allowedProviders.some((p) => matchesRef(p, providerNamespace, provider)));
    if (!providerOk) fail("provider_not_allowed", `provider "${provider}" is not allowed by token context`);
    if (model === undefined) continue;
    const modelMatches = (entry: string) => entry === model || entry === `${provider}/${model}`;
    if ((context.model !== undefined && !modelMatches(context.model)) || (allowedModels && !allowedModels.some(modelMatches))) {
      fail("model_not_allowed", `model "${model}" is not allowed by token context`);
    }
  }

  const workspace = facts.workspace;
  if (context.repo !== undefined && (!workspace?.repo || normalizeRepo(workspace.repo) !== normalizeRepo(context.repo))) {
    fail("workspace_not_allowed", `workspace repository must be "${context.repo}"`);
  }
  // A pinned repository covers where the change is published too, not only what is checked out.
  if (context.repo !== undefined && workspace?.publicationRepo !== undefined && normalizeRepo(workspace.publicationRepo) !== normalizeRepo(context.repo)) {
    fail("workspace_not_allowed", `workspace publication repository must be "${context.repo}"`);
  }
  if (context.branch !== undefined && workspace?.branch !== undefined && workspace.branch !== context.branch) {
    fail("workspace_not_allowed", `workspace branch "${workspace.branch}" is not "${context.branch}"`);
  }
  if (context.branch !== undefined && workspace?.pushBranch !== undefined && workspace.pushBranch.replace(/^refs\/heads\//, "") !== context.branch) {
    fail("workspace_not_allowed", `workspace pushBranch "${workspace.pushBranch}" is not "${context.branch}"`);
  }
  if (context.ref !== undefined ? workspace?.ref !== undefined && workspace.ref !== context.ref : context.branch !== undefined && workspace?.ref !== undefined) {
    fail("workspace_not_allowed", context.ref !== undefined ? `workspace ref must be "${context.ref}"` : "the token context pins a branch, so a ref may not be chosen");
  }

  const allowedTools = contextList(context, "allowedTools");
  if (allowedTools) {
    if (facts.tools === "unrestricted") fail("tool_not_allowed", "agent runtime tools are unrestricted by task or agent while token context restricts allowedTools");
    else {
      for (const tool of facts.tools.filter((t) => !allowedTools.includes(t))) {
        fail("tool_not_allowed", facts.isChild ? `child task tool "${tool}" is not allowed by transaction context` : `tool "${tool}" is not allowed by token context`);
      }
    }
  }

  failures.push(...credentialFailures(claims, facts.namespace, facts.credentialSecrets, overrides));
  return failures;
}

/** Each call is checked against the stamped `allowedTools`, catching tools an Agent gained after admission. */
export function toolCallFailures(claims: TransactionClaims, tool: string): GrantFailure[] {
  const allowed = contextList(claims.context, "allowedTools");
  return allowed && !allowed.includes(tool) ? [{ reason: "tool_not_allowed", detail: `tool "${tool}" is not allowed by token context` }] : [];
}

/** Credentials: the credential scope, the token's namespace, and only the Secret named by `tctx.secret`. */
export function credentialFailures(claims: TransactionClaims, namespace: string, secrets: string[], overrides: Record<string, string[]>): GrantFailure[] {
  if (secrets.length === 0) return [];
  const failures: GrantFailure[] = [];
  if (!hasScope(claims, CREDENTIALS_SCOPE, overrides)) failures.push({ reason: "missing_scope", detail: `scope "${CREDENTIALS_SCOPE}" is required to use credentials` });
  if (claims.context.namespace !== undefined && claims.context.namespace !== namespace) {
    failures.push({ reason: "namespace_mismatch", detail: `credentials in namespace "${namespace}" are outside the token's namespace` });
  }
  for (const secret of secrets) {
    if (claims.context.secret !== secret) failures.push({ reason: "credential_not_allowed", detail: `secret "${secret}" is not the token context's secret` });
  }
  return failures;
}
