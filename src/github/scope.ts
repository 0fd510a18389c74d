import { CREDENTIALS_SCOPE, GrantRefused } from "../auth/grants.ts";
import type { GrantGate } from "../auth/grant-gate.ts";
import { parentNamespaceOf, parentTaskName } from "../resources/parent-link.ts";
import type { SecretSpec } from "../resources/secret.ts";
import type { Task, TaskSpec, TaskStatus } from "../resources/task.ts";
import type { ResourceStore } from "../store/resource-store.ts";
import { OrkaError } from "../util/errors.ts";
import { fullName, parseRepoUrl, repoOfSetting, sameRepo, type RepoRef } from "./repo-url.ts";
import type { GithubSettings } from "./settings.ts";

/** Reads use the matched repository's read credential; writes only the forge credential. */
export type GithubAccess = "read" | "write";

/** Where a call's repository and credentials come from, as the model gave them. */
export interface ScopeArgs {
  task_name?: string;
  repo_url?: string;
}

export interface ScopeDeps {
  store: ResourceStore;
  grants: GrantGate;
  settings: GithubSettings;
  /** Where the grant check happened, for the audit log. */
  site: string;
}

/** A repository a Task may act on, with what names it and which read credential role serves it. */
interface RepoScope {
  label: "task workspace" | "task publication workspace" | "transaction repo context";
  ref: RepoRef;
  readRole: "readCredentialRef" | "publicationReadCredentialRef";
}

/** A Secret and the key in it that holds the token. */
export interface CredentialRef {
  name: string;
  key?: string;
}

/** `git` for read credentials, `forge credential` for the write one, as errors name them. */
type CredentialKind = "git" | "forge credential";

/** What a GitHub call acts on and with. */
export interface GithubTarget {
  /** The web host of the repository (github.com, or the Enterprise host). */
  host: string;
  owner: string;
  repo: string;
  /** The Task whose workspace gave the scope and the credential. */
  task: Task;
  token: string;
}

const UNRESOLVED_READ_TOKEN = "could not resolve GitHub token from task secret, /secrets/git/token, /secrets/git/password, or GITHUB_TOKEN";

/**
 * The repository and token of one call, checked in this order: repo_url parse → scope Task → scope match →
 * credential role → the transaction's grant for that Secret → the Secret. Every refusal comes before any
 * Secret is read, so a refused call reads no Secret and sends no request.
 */
export async function resolveGithubTarget(deps: ScopeDeps, caller: Task, args: ScopeArgs, access: GithubAccess, checkTask?: (task: Task) => void): Promise<GithubTarget> {
  const asked = args.repo_url?.trim() ? parseRepoUrl(args.repo_url, deps.settings.webHosts) : undefined;
  const task = await scopeTask(deps.store, caller, args.task_name?.trim());
  const scope = matchScope(task, asked);
  if (!deps.settings.webHosts.includes(scope.ref.host)) {
    throw new OrkaError("failed_precondition", `${scope.label} repository ${scope.ref.host}/${fullName(scope.ref)} is not on a GitHub host this server calls (${deps.settings.webHosts.join(", ")})`);
  }
  checkTask?.(task);
  // The scope's own spelling: GitHub matches names case-insensitively, and the scope is what was permitted.
  const { host, owner, repo } = scope.ref;
  if (access === "write") {
    const name = task.spec.workspace?.forgeCredentialRef;
    if (!name) throw new OrkaError("failed_precondition", `task ${task.metadata.name} workspace has no forgeCredentialRef configured`);
    const key = task.spec.workspace?.forgeCredentialKey;
    return { host, owner, repo, task, token: await useCredential(deps, caller, { name, key }, "forge credential") };
  }
  const name = task.spec.workspace?.[scope.readRole];
  const key = scope.readRole === "readCredentialRef" ? task.spec.workspace?.readCredentialKey : undefined;
  if (name) return { host, owner, repo, task, token: await useCredential(deps, caller, { name, key }, "git") };
  if (deps.settings.fallbackToken && mayUseOperatorToken(task)) return { host, owner, repo, task, token: deps.settings.fallbackToken };
  throw new OrkaError("failed_precondition", UNRESOLVED_READ_TOKEN);
}

/**
 * The operator's GITHUB_TOKEN reads for Tasks a person created, and for Tasks under a signed
 * transaction (whose grant pins every repository they may name). A child a model delegated without
 * one names its repository itself, so it must name its read Secret too: the operator's token would
 * otherwise read any repository a model names.
 */
function mayUseOperatorToken(task: Task): boolean {
  return parentTaskName(task) === undefined || task.spec.transaction !== undefined;
}

/** The calling Task, or a child it created (by the protected parent link), read from the caller's namespace. */
async function scopeTask(store: ResourceStore, caller: Task, name: string | undefined): Promise<Task> {
  if (!name || name === caller.metadata.name) return caller;
  const task = await store.get<TaskSpec, TaskStatus>("Task", caller.metadata.namespace, name);
  if (!task) throw new OrkaError("not_found", `failed to get task ${name}: not found`);
  if (parentTaskName(task) !== caller.metadata.name || parentNamespaceOf(task) !== caller.metadata.namespace) {
    throw new OrkaError("permission_denied", `task ${name} is not the current task or one of its children`);
  }
  return task;
}

/** The repositories a Task may act on, in order: its workspace, its publication repository, its signed transaction's. */
function scopesOf(task: Task): RepoScope[] {
  const workspace = task.spec.workspace;
  const candidates: [RepoScope["label"], string | undefined, RepoScope["readRole"]][] = [
    ["task workspace", workspace?.gitRepo, "readCredentialRef"],
    ["task publication workspace", workspace?.publicationGitRepo, "publicationReadCredentialRef"],
    // Only a verified token is stamped on a Task, so this context is signed.
    ["transaction repo context", task.spec.transaction?.context.repo, "readCredentialRef"],
  ];
  return candidates.flatMap(([label, value, readRole]) => {
    const ref = value ? repoOfSetting(value) : undefined;
    return ref ? [{ label, ref, readRole }] : [];
  });
}

function matchScope(task: Task, asked: RepoRef | undefined): RepoScope {
  const scopes = scopesOf(task);
  const name = task.metadata.name;
  if (!asked) {
    if (scopes[0]) return scopes[0];
    if (!task.spec.workspace) throw new OrkaError("failed_precondition", `task ${name} does not have workspace configuration`);
    throw new OrkaError("failed_precondition", `task ${name} workspace has no gitRepo configured`);
  }
  const match = scopes.find((scope) => sameRepo(scope.ref, asked));
  if (match) return match;
  if (scopes.length === 0) throw new OrkaError("permission_denied", `repo_url repository ${fullName(asked)} requires a permitted repository scope`);
  const permitted = scopes.map((scope) => `${scope.label}=${fullName(scope.ref)}`).join(", ");
  throw new OrkaError("permission_denied", `repo_url repository ${fullName(asked)} does not match permitted repository scope ${permitted}`);
}

/** The caller's transaction must allow the Secret before it is read. */
async function useCredential(deps: ScopeDeps, caller: Task, ref: CredentialRef, kind: CredentialKind): Promise<string> {
  const claims = caller.spec.transaction;
  const namespace = caller.metadata.namespace;
  if (claims) {
    try {
      deps.grants.credentials(claims, "useCredential", namespace, [ref.name], { method: "TOOL", path: deps.site, principal: caller.metadata.name, namespace });
    } catch (err) {
      if (!(err instanceof GrantRefused)) throw err;
      throw new OrkaError(
        "permission_denied",
        `not authorized to read ${kind} secret ${namespace}/${ref.name}: the task's transaction needs the ${CREDENTIALS_SCOPE} scope and tctx.secret naming this Secret`,
      );
    }
  }
  return readCredential(deps.store, namespace, ref, kind);
}

/** The token under the configured key (trimmed; `token` by default), never a sibling key. */
export async function readCredential(store: ResourceStore, namespace: string, ref: CredentialRef, kind: CredentialKind): Promise<string> {
  const key = ref.key?.trim() || "token";
  const secret = await store.get<SecretSpec>("Secret", namespace, ref.name);
  if (!secret) throw new OrkaError("failed_precondition", `failed to get ${kind} secret ${ref.name}: secret "${ref.name}" not found in namespace "${namespace}"`);
  const value = secret.spec.data[key];
  if (value === undefined) throw new OrkaError("failed_precondition", `${kind} secret ${ref.name} does not contain configured key "${key}"`);
  if (!value.trim()) throw new OrkaError("failed_precondition", `${kind} secret ${ref.name} contains an empty configured key "${key}"`);
  return value.trim();
}
