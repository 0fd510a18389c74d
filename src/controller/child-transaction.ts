import { randomBytes } from "node:crypto";
import type { GrantGate } from "../auth/grant-gate.ts";
import type { NamespaceIsolation } from "../auth/isolation.ts";
import { exchangeForTransactionToken, readSubjectTokenFile, TXN_TOKEN_TYPE_URN, type ChildTokenExchangeConfig } from "../auth/token-exchange.ts";
import { ANNOTATION, LABEL, labelValue } from "../resources/meta.ts";
import type { SecretSpec } from "../resources/secret.ts";
import type { Task } from "../resources/task.ts";
import type { ResourceStore } from "../store/resource-store.ts";
import { OrkaError } from "../util/errors.ts";
import { resolveTaskFacts } from "./task-tools.ts";

const JWT_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:jwt";

/** What a parent's transaction lets its children do: the grant gate and, when configured, token exchange. */
export interface ChildGrants {
  gate: GrantGate;
  /** The server's namespace isolation: which namespaces a child may be created in. */
  isolation: NamespaceIsolation;
  exchange?: ChildTokenExchangeConfig;
  /** The effect-ledger key of the tool call creating the child: a repeat finds the child it created. */
  effectKey?: string;
  /** Hosts a child's workspace repository may be on (a model names it). */
  gitHosts: readonly string[];
}

/**
 * Creates a child of a Task that carries a transaction: the child is checked against the parent's stamped
 * grant first, then, with token exchange on, gets its own narrower token in a Secret.
 * On any failure nothing is left behind: no child, no Secret.
 */
export async function createChildUnderGrant(store: ResourceStore, grants: ChildGrants, parent: Task, child: Task, operation: string): Promise<Task> {
  const claims = parent.spec.transaction;
  if (!claims) return store.create(child);
  await checkChildGrant(store, grants, parent, child, operation);
  if (!grants.exchange) return store.create(child);

  const scopes = grants.exchange.childScope.split(/\s+/).filter(Boolean);
  const outside = scopes.filter((scope) => !claims.scopes.includes(scope));
  if (outside.length > 0) throw new OrkaError("permission_denied", `child transaction scope "${outside[0]}" is not present in parent transaction scopes`);
  if (child.metadata.namespace !== parent.metadata.namespace) throw new OrkaError("permission_denied", "child transaction tokens need the child in the parent's namespace");

  const token = await exchangeToken(store, grants.exchange, parent, child, operation);
  const secret = await store.create<SecretSpec, unknown>({
    apiVersion: "v1",
    kind: "Secret",
    metadata: {
      name: `${parent.metadata.name.slice(0, 200)}-txn-${randomBytes(4).toString("hex")}`,
      namespace: child.metadata.namespace,
      labels: { [LABEL.parentTask]: labelValue(parent.metadata.name) },
      // Owned by the parent until the child exists, so a crash in between cannot orphan the token.
      ownerReferences: [{ apiVersion: parent.apiVersion, kind: "Task", name: parent.metadata.name, uid: parent.metadata.uid! }],
    },
    spec: { type: "Opaque", data: { token } },
  });
  child.spec.transaction = { ...claims, scope: scopes.join(" "), scopes };
  child.metadata.annotations = { ...child.metadata.annotations, [ANNOTATION.transactionTokenSecret]: secret.metadata.name, [ANNOTATION.transactionScope]: scopes.join(" ") };

  let created: Task | undefined;
  try {
    created = await store.create(child);
    await store.update({ ...secret, metadata: { ...secret.metadata, ownerReferences: [{ apiVersion: created.apiVersion, kind: "Task", name: created.metadata.name, uid: created.metadata.uid! }] } });
    return created;
  } catch (err) {
    if (created) await store.delete("Task", created.metadata.namespace, created.metadata.name).catch(() => undefined);
    await store.delete("Secret", secret.metadata.namespace, secret.metadata.name).catch(() => undefined);
    throw err;
  }
}

/**
 * Refuses a child (as drafted so far) that the parent's transaction grant does not cover; a parent without a
 * transaction may have any. Creation checks it again, so a caller may check a draft early, before it looks up
 * anything the refusal should not reveal.
 */
export async function checkChildGrant(store: ResourceStore, grants: ChildGrants, parent: Task, child: Task, operation: string): Promise<void> {
  const claims = parent.spec.transaction;
  if (!claims) return;
  const site = { method: "TOOL", path: operation, principal: parent.metadata.name, namespace: child.metadata.namespace };
  grants.gate.task(claims, operation, await resolveTaskFacts(store, child), site, (failures) => failures.map((f) => f.detail).join("; "));
}

/** The subject is the parent's own transaction token when it has one, else the workload's token file. */
async function exchangeToken(store: ResourceStore, config: ChildTokenExchangeConfig, parent: Task, child: Task, operation: string): Promise<string> {
  const parentSecret = parent.metadata.annotations?.[ANNOTATION.transactionTokenSecret];
  let subjectToken: string | undefined;
  let subjectTokenType = JWT_TOKEN_TYPE;
  if (parentSecret) {
    subjectToken = (await store.get<SecretSpec, unknown>("Secret", parent.metadata.namespace, parentSecret))?.spec.data.token;
    subjectTokenType = TXN_TOKEN_TYPE_URN;
  } else if (config.subjectTokenFile) {
    subjectToken = await readSubjectTokenFile(config.subjectTokenFile);
  }
  if (!subjectToken) throw new OrkaError("unavailable", "no subject token for child token exchange: set ORKA_CONTEXT_TOKEN_SUBJECT_TOKEN_FILE");
  try {
    return await exchangeForTransactionToken(config, {
      subjectToken,
      subjectTokenType,
      scope: config.childScope,
      details: {
        operation,
        parentTask: parent.metadata.name,
        namespace: child.metadata.namespace,
        ...(child.spec.agentRef ? { agent: child.spec.agentRef.name } : {}),
        ...(parent.spec.transaction ? { txn: parent.spec.transaction.id } : {}),
      },
    });
  } catch (err) {
    throw new OrkaError("unavailable", `exchanging child transaction token: ${err instanceof Error ? err.message : String(err)}`);
  }
}
