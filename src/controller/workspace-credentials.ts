import type { SecretSpec } from "../resources/secret.ts";
import type { Workspace } from "../resources/task.ts";
import type { ResourceStore } from "../store/resource-store.ts";
import { OrkaError } from "../util/errors.ts";

type CredentialRole = "readCredentialRef" | "publicationReadCredentialRef" | "publicationCredentialRef" | "forgeCredentialRef";
const ROLES: readonly CredentialRole[] = ["readCredentialRef", "publicationReadCredentialRef", "publicationCredentialRef", "forgeCredentialRef"];

/** Secrets a workspace (or a PR monitor) without a named read Secret reads with, the first that exists. */
export const CONVENTIONAL_READ_SECRETS = ["git-credentials", "github-credentials", "copilot-token", "github-token", "git-token"] as const;
/** The keys a credential Secret holds its token under, the first non-empty one. */
const TOKEN_KEYS = ["token", "password", "GITHUB_TOKEN"];
/** Roles whose key a workspace may name (create_pr_monitor records a key other than `token` this way): then only that key counts. */
const CONFIGURED_KEYS: Partial<Record<CredentialRole, "readCredentialKey" | "forgeCredentialKey">> = { readCredentialRef: "readCredentialKey", forgeCredentialRef: "forgeCredentialKey" };

/** The token of the Secret a workspace names for `role`; undefined when it names none. */
export async function workspaceCredential(store: ResourceStore, namespace: string, workspace: Workspace, role: CredentialRole): Promise<string | undefined> {
  const name = workspace[role];
  if (!name) return undefined;
  const secret = await store.get<SecretSpec, unknown>("Secret", namespace, name);
  if (!secret) throw new OrkaError("failed_precondition", `Secret "${name}" named by workspace.${role} does not exist in namespace "${namespace}"`);
  const keyField = CONFIGURED_KEYS[role];
  const key = keyField && workspace[keyField]?.trim();
  const token = key ? secret.spec.data[key] : tokenOf(secret.spec);
  if (!token) throw new OrkaError("failed_precondition", `Secret "${name}" named by workspace.${role} has no ${key ? `"${key}"` : TOKEN_KEYS.join(", ")} key with a value`);
  return token;
}

/**
 * The clone credential: the named Secret, else the first conventional one that exists and no other
 * role names. None at all is fine: a public repository clones without one.
 */
export async function readCredential(store: ResourceStore, namespace: string, workspace: Workspace): Promise<string | undefined> {
  if (workspace.readCredentialRef) return workspaceCredential(store, namespace, workspace, "readCredentialRef");
  const taken = new Set(ROLES.map((role) => workspace[role]).filter(Boolean));
  for (const name of CONVENTIONAL_READ_SECRETS) {
    if (taken.has(name)) continue;
    const secret = await store.get<SecretSpec, unknown>("Secret", namespace, name);
    const token = secret && tokenOf(secret.spec);
    if (token) return token;
  }
  return undefined;
}

/** Reading the publication target: its own read credential, else the push credential. */
export async function publicationReadCredential(store: ResourceStore, namespace: string, workspace: Workspace): Promise<string | undefined> {
  return (
    (await workspaceCredential(store, namespace, workspace, "publicationReadCredentialRef")) ??
    (await workspaceCredential(store, namespace, workspace, "publicationCredentialRef"))
  );
}

/** The first of the conventional token keys (token, password, GITHUB_TOKEN) that holds a non-blank value. */
export function tokenKeyOf(secret: SecretSpec): string | undefined {
  return TOKEN_KEYS.find((key) => (secret.data[key] ?? "").trim() !== "");
}

function tokenOf(secret: SecretSpec): string | undefined {
  const key = tokenKeyOf(secret);
  return key && secret.data[key];
}
