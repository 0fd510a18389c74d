import { OrkaError } from "../util/errors.ts";
import type { Principal } from "./principal.ts";

/** B9: which namespaces this server serves, and whether every caller must be bound to one. */
export interface NamespaceIsolation {
  enforce: boolean;
  /** When set, the only namespace this server acts in. */
  watchNamespace?: string;
}

const REF_PATHS = [["agentRef"], ["providerRef"], ["ai", "providerRef"]] as const;

/** Refuses a request outside the watched namespace, an unbound caller, and (when enforced) cross-namespace references. */
export function checkIsolation(isolation: NamespaceIsolation, principal: Principal, namespace: string | undefined, body: unknown): void {
  if (namespace === undefined) return;
  if (isolation.watchNamespace && namespace !== isolation.watchNamespace) throw new OrkaError("permission_denied", "namespace not allowed");
  if (!isolation.enforce) return;
  if (!principal.admin && !principal.namespace && !principal.transaction?.context.namespace) {
    throw new OrkaError("permission_denied", "namespace-bound identity required");
  }
  for (const ref of referencedNamespaces(body)) {
    if (ref !== namespace) throw new OrkaError("permission_denied", `cross-namespace references are not allowed: "${ref}" from namespace "${namespace}"`);
  }
}

/** Namespaces named by agentRef / providerRef, in flat or {spec} request bodies. */
function referencedNamespaces(body: unknown): string[] {
  const record = (value: unknown) => (value && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined);
  const roots = [record(body), record(record(body)?.spec)].filter((r): r is Record<string, unknown> => !!r);
  const found: string[] = [];
  for (const root of roots) {
    for (const path of REF_PATHS) {
      const ref = path.reduce<Record<string, unknown> | undefined>((node, key) => record(node?.[key]), root);
      if (typeof ref?.namespace === "string" && ref.namespace) found.push(ref.namespace);
    }
  }
  return found;
}
