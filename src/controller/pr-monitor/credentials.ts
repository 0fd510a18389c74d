import type { SecretSpec } from "../../resources/secret.ts";
import type { ResourceStore } from "../../store/resource-store.ts";
import { ToolRefusal } from "../../tools/envelope.ts";
import { CONVENTIONAL_READ_SECRETS, tokenKeyOf } from "../workspace-credentials.ts";


/** A Secret the monitor Task will use, and its key when that is not `token` (the workspace default). */
export interface ChosenSecret {
  name: string;
  key?: string;
}

const readSecret = (store: ResourceStore, namespace: string, name: string) => store.get<SecretSpec, unknown>("Secret", namespace, name);

/** Names its first non-empty token key, or refuses the Secret: a monitor that cannot read GitHub would fail every run. */
function usable(secret: { metadata: { name: string }; spec: SecretSpec }, role: string, namespace: string): ChosenSecret {
  const key = tokenKeyOf(secret.spec);
  if (!key) {
    throw new ToolRefusal(
      "invalid_arguments",
      `${role} Secret "${secret.metadata.name}" in namespace "${namespace}" has no non-empty token, password or GITHUB_TOKEN key`,
      "store the GitHub token under the key token in that Secret, or name another Secret",
    );
  }
  return { name: secret.metadata.name, ...(key === "token" ? {} : { key }) };
}

/**
 * The read credential: the Secret named by gitSecretRef, which must exist, else the first of the
 * default names that exists. Called only after the caller may create Tasks in `namespace`.
 */
export async function chooseReadSecret(store: ResourceStore, namespace: string, explicit: string | undefined): Promise<ChosenSecret> {
  if (explicit) {
    const secret = await readSecret(store, namespace, explicit);
    if (!secret) throw new ToolRefusal("not_found", `read credentialRef "${explicit}" not found in namespace "${namespace}"`, "create that Secret first, or name an existing one with gitSecretRef");
    return usable(secret, "read credential", namespace);
  }
  for (const name of CONVENTIONAL_READ_SECRETS) {
    const secret = await readSecret(store, namespace, name);
    if (secret) return usable(secret, "read credential", namespace);
  }
  throw new ToolRefusal(
    "invalid_arguments",
    `readCredentialRef is required for PR monitor GitHub access; no supported git credential Secret found in namespace "${namespace}"`,
    `create a Secret with the GitHub token under the key token and name it with gitSecretRef (or call it ${CONVENTIONAL_READ_SECRETS[0]})`,
  );
}

/** The forge credential that posts reviews: it must exist, hold a token, and be another Secret than the read one. */
export async function chooseForgeSecret(store: ResourceStore, namespace: string, name: string, read: ChosenSecret): Promise<ChosenSecret> {
  if (name === read.name) {
    throw new ToolRefusal(
      "invalid_arguments",
      `forgeSecretRef "${name}" is also the read credential: the review-posting token must be a different Secret`,
      "name a separate Secret with forgeSecretRef, or leave it out to create a monitor that cannot post reviews",
    );
  }
  const secret = await readSecret(store, namespace, name);
  if (!secret) throw new ToolRefusal("not_found", `forge credentialRef "${name}" not found in namespace "${namespace}"`, "create that Secret first, or name an existing one with forgeSecretRef");
  return usable(secret, "forge credential", namespace);
}
