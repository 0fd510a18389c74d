import { OrkaError } from "../util/errors.ts";
import { boundNamespace, canReadNamespace, type Principal } from "./principal.ts";

/** Which namespaces this server serves, whether every caller must be bound to one, and whether references may cross. */
export interface NamespaceIsolation {
  enforce: boolean;
  /** When set, the only namespace this server acts in. */
  watchNamespace?: string;
}

/** A reference into a namespace, with the field that makes it (as the caller would name it). */
export interface NamespaceReference {
  field: string;
  namespace: string;
}

const REF_PATHS = [["agentRef"], ["providerRef"], ["ai", "providerRef"]] as const;

/**
 * Refuses a request outside the watched namespace, an unbound caller when isolation is enforced, and the
 * references its body makes into other namespaces (see checkReferences).
 */
export function checkIsolation(isolation: NamespaceIsolation, principal: Principal, namespace: string | undefined, body: unknown): void {
  if (namespace === undefined) return;
  if (isolation.watchNamespace && namespace !== isolation.watchNamespace) throw new OrkaError("permission_denied", "namespace not allowed");
  if (isolation.enforce && !principal.admin && boundNamespace(principal) === undefined) {
    throw new OrkaError("permission_denied", "namespace-bound identity required");
  }
  checkReferences(isolation, principal, namespace, namespaceReferences(body));
}

/**
 * Refuses a reference from `namespace` into another one: always when isolation is enforced, otherwise unless the
 * caller may read that namespace (else a Task could borrow a Provider's key or an Agent's private prompt its
 * caller may not even see).
 */
export function checkReferences(isolation: NamespaceIsolation, principal: Principal, namespace: string, references: NamespaceReference[]): void {
  for (const ref of references) {
    if (ref.namespace === namespace) continue;
    if (isolation.enforce) throw new OrkaError("permission_denied", `cross-namespace references are not allowed: "${ref.namespace}" from namespace "${namespace}"`);
    if (!canReadNamespace(principal, ref.namespace)) {
      throw new OrkaError(
        "permission_denied",
        `${ref.field} refers to namespace "${ref.namespace}", which this caller cannot read: refer to an object in namespace "${namespace}"`,
        { field: ref.field },
      );
    }
  }
}

/** Namespaces named by agentRef / providerRef, in flat or {spec} request bodies, with the field that names each. */
function namespaceReferences(body: unknown): NamespaceReference[] {
  const record = (value: unknown) => (value && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined);
  const roots = [{ prefix: "", node: record(body) }, { prefix: "spec.", node: record(record(body)?.spec) }];
  const found: NamespaceReference[] = [];
  for (const { prefix, node } of roots) {
    if (!node) continue;
    for (const path of REF_PATHS) {
      const ref = path.reduce<Record<string, unknown> | undefined>((parent, key) => record(parent?.[key]), node);
      if (typeof ref?.namespace === "string" && ref.namespace) found.push({ field: `${prefix}${path.join(".")}`, namespace: ref.namespace });
    }
  }
  return found;
}
