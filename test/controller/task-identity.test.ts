import { describe, expect, it } from "vitest";
import { checkNamespaceForTask } from "../../src/controller/task-identity.ts";
import type { Task } from "../../src/resources/task.ts";

const task = (spec: Partial<Task["spec"]>): Task => ({ apiVersion: "core.orka.ai/v1alpha1", kind: "Task", metadata: { name: "parent", namespace: "home" }, spec: { type: "ai", priority: 500, ...spec } });
const transaction = (context: Record<string, string>) => ({
  profile: "transaction-token" as const,
  id: "txn-1",
  issuer: "https://issuer",
  audience: "orka",
  subject: "svc",
  requestingWorkload: "svc",
  scope: "orka:tasks:create",
  scopes: ["orka:tasks:create"],
  contextDigest: "d",
  context,
});
const open = { enforce: false };

// Where a Task's identity may act besides its own namespace (delegate_task, create_container_task, delete_agent).
describe("namespaces a Task's identity may act in", () => {
  it("allows its own namespace to anyone, and any namespace to the admin", () => {
    expect(() => checkNamespaceForTask(task({}), "home", open)).not.toThrow();
    expect(() => checkNamespaceForTask(task({ requestedBy: { username: "admin", roles: ["admin"] } }), "elsewhere", open)).not.toThrow();
    expect(() => checkNamespaceForTask(task({ transaction: transaction({}) }), "elsewhere", open)).not.toThrow();
    expect(() => checkNamespaceForTask(task({ transaction: transaction({ namespace: "elsewhere" }) }), "elsewhere", open)).not.toThrow();
  });

  it.each([
    ["a namespace-bound requester", task({ requestedBy: { username: "team-a", roles: ["user"] } }), open, 'namespace "elsewhere" is not permitted for this task: its requester is bound to namespace "home"'],
    ["a requester whose issuer calls it admin", task({ requestedBy: { username: "x", issuer: "https://idp", roles: ["admin"] } }), open, 'namespace "elsewhere" is not permitted for this task: its requester is bound to namespace "home"'],
    ["no requester at all", task({}), open, 'namespace "elsewhere" is not permitted for this task: its requester is bound to namespace "home"'],
    ["a transaction bound elsewhere", task({ transaction: transaction({ namespace: "third" }) }), open, 'namespace "elsewhere" is not permitted for this task: its transaction token is bound to namespace "third"'],
    ["an unbound transaction under isolation", task({ transaction: transaction({}) }), { enforce: true }, 'namespace "elsewhere" is not permitted for this task: namespace isolation needs a namespace-bound transaction token'],
    ["the admin on a server watching one namespace", task({ requestedBy: { username: "admin", roles: ["admin"] } }), { enforce: false, watchNamespace: "home" }, 'namespace "elsewhere" is not permitted for this task: this server serves only namespace "home"'],
  ])("refuses another namespace for %s", (_label, parent, isolation, message) => {
    expect(() => checkNamespaceForTask(parent, "elsewhere", isolation)).toThrow(message);
  });
});
