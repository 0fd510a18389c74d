import type { NamespaceIsolation } from "../auth/isolation.ts";
import type { RequestedBy } from "../auth/principal.ts";
import { OrkaError } from "../util/errors.ts";
import type { Task } from "../resources/task.ts";

/**
 * Refuses a namespace other than the Task's own unless the identity the Task acts for may act there:
 * a transaction token where its context allows; otherwise only the admin, because every other
 * identity Orka authenticates (static, OIDC and ServiceAccount tokens) is bound to one namespace,
 * the one it created the Task in.
 */
export function checkNamespaceForTask(task: Task, namespace: string, isolation: NamespaceIsolation): void {
  if (namespace === task.metadata.namespace) return;
  const refuse = (why: string): never => {
    throw new OrkaError("permission_denied", `namespace "${namespace}" is not permitted for this task: ${why}`);
  };
  if (isolation.watchNamespace && namespace !== isolation.watchNamespace) refuse(`this server serves only namespace "${isolation.watchNamespace}"`);
  const transaction = task.spec.transaction;
  if (transaction) {
    const bound = transaction.context.namespace;
    if (bound !== undefined && bound !== namespace) refuse(`its transaction token is bound to namespace "${bound}"`);
    if (bound === undefined && isolation.enforce) refuse("namespace isolation needs a namespace-bound transaction token");
    return;
  }
  if (!isStaticAdmin(task.spec.requestedBy)) refuse(`its requester is bound to namespace "${task.metadata.namespace}"`);
}

/** The admin token's identity: a static token (no issuer) with the admin role. */
function isStaticAdmin(requestedBy: RequestedBy | undefined): boolean {
  return requestedBy !== undefined && requestedBy.issuer === undefined && (requestedBy.roles ?? []).includes("admin");
}
