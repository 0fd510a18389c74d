import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashToken } from "../../src/store/data-store.ts";
import { API_VERSION, type Resource } from "../../src/resources/meta.ts";
import type { RunningOrka } from "../../src/server.ts";
import { EMBEDDED_ADMIN_TOKEN, startEmbeddedOrka } from "../helpers/embedded.ts";
import pino from "pino";
import { GrantGate } from "../../src/auth/grant-gate.ts";
import { delegate as delegateChild } from "../../src/controller/children.ts";

// delegate_task's refusals and retry bookkeeping on the control plane,
// called as a worker would, with an attempt token.
describe("delegate_task rules", () => {
  let orka: RunningOrka;
  const tokens: Record<string, string> = {};
  const task = (name: string, extra: Partial<Resource["metadata"]> = {}, spec: object = {}) => ({
    apiVersion: API_VERSION,
    kind: "Task",
    metadata: { name, namespace: "default", ...extra },
    spec: { type: "ai", agentRef: { name: "boss" }, prompt: "x", priority: 500, ...spec },
  });
  const delegate = async (from: string, body: object) => {
    const response = await fetch(`${orka.url}/internal/v1/tasks/default/${from}/delegate`, {
      method: "POST",
      headers: { authorization: `Bearer ${tokens[from]}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as any };
  };
  const taskCount = async () => (await orka.store.list("Task")).items.length;
  const deleteAgent = async (from: string, name: string, namespace?: string) => {
    const query = namespace ? `?namespace=${namespace}` : "";
    const response = await fetch(`${orka.url}/internal/v1/tasks/default/${from}/agents/${name}${query}`, { method: "DELETE", headers: { authorization: `Bearer ${tokens[from]}` } });
    return { status: response.status, body: (await response.json()) as any };
  };
  const stored = async (name: string, namespace = "default"): Promise<any> => orka.store.get("Task", namespace, name);

  beforeAll(async () => {
    orka = await startEmbeddedOrka();
    await orka.store.create({ apiVersion: API_VERSION, kind: "Agent", metadata: { name: "boss", namespace: "default" }, spec: { coordination: { enabled: true, maxDepth: 1, maxConcurrentChildren: 5, allowedAgents: [{ name: "helper" }] } } });
    await orka.store.create({ apiVersion: API_VERSION, kind: "Agent", metadata: { name: "helper", namespace: "default" }, spec: {} });
    await orka.store.create({ apiVersion: API_VERSION, kind: "Agent", metadata: { name: "helper", namespace: "team-b" }, spec: {} });
    await orka.store.create({ apiVersion: API_VERSION, kind: "Agent", metadata: { name: "hub", namespace: "default" }, spec: { coordination: { enabled: true, maxDepth: 2, maxConcurrentChildren: 5, allowedAgents: [{ name: "helper" }, { name: "helper", namespace: "team-b" }, { name: "helper", namespace: "default" }] } } });
    // Yearly schedules keep the controller from running (and finishing) the callers; only this test's attempts act.
    const yearly = { schedule: "0 0 1 1 *" };
    await orka.store.create(task("top", {}, yearly));
    await orka.store.create(task("deep", { annotations: { "orka.ai/coordination-depth": "1" } }, yearly));
    // Created for the admin, who may act in every namespace; "top" was created by no one in particular.
    await orka.store.create(task("admin-top", {}, { ...yearly, agentRef: { name: "hub" }, requestedBy: { username: "admin", roles: ["admin"] } }));
    for (const name of ["top", "deep", "admin-top"]) {
      tokens[name] = `token-of-${name}`;
      const created = (await orka.store.get("Task", "default", name))!;
      orka.data.createAttempt({ id: `${name}-1`, namespace: "default", task: name, taskUid: created.metadata.uid!, number: 1, allowedTools: ["delegate_task", "wait_for_tasks", "delete_agent"] }, hashToken(tokens[name]));
    }
  });
  afterAll(() => orka.close());

  it("refuses beyond the depth, outside the allow-list, unknown agents and bad workspaces, creating nothing", async () => {
    const before = await taskCount();
    expect((await delegate("deep", { agent: "helper", prompt: "go" })).body.error.message).toBe("coordination depth exceeded: current depth 1, max depth 1");
    expect((await delegate("top", { agent: "boss", prompt: "go" })).body.error.message).toBe('agent "default/boss" is not in the allowed agents list');
    expect((await delegate("top", { agent: "helper", prompt: "" })).body.error.message).toBe("prompt is required");
    expect((await delegate("top", { agent: "helper", prompt: "go", maxTurns: 3 })).body.error.message).toBe("maxTurns and allowBash are only supported for coding-agent children");
    expect((await delegate("top", { agent: "helper", prompt: "go", allowBash: true })).body.error.message).toBe("maxTurns and allowBash are only supported for coding-agent children");
    expect((await delegate("top", { agent: "helper", prompt: "go", workspace: { gitRepo: "https://internal.example/o/r" } })).body.error.message).toBe(
      'workspace.gitRepo is on host "internal.example", which is not an allowed git host (allowed: github.com; the operator lists them in ORKA_GIT_HOSTS)',
    );
    expect((await delegate("top", { agent: "helper", prompt: "go", workspace: { gitRepo: "https://github.com/o/r", publicationGitRepo: "https://gitlab.internal/o/r", publicationCredentialRef: "p" } })).body.error.message).toMatch(
      /^workspace.publicationGitRepo is on host "gitlab.internal", which is not an allowed git host/,
    );
    expect((await delegate("top", { agent: "helper", prompt: "go", timeout: "soon" })).body.error.message).toBe('invalid timeout "soon": use a duration such as 20m');
    expect((await delegate("top", { agent: "helper", prompt: "go", priority: 5000 })).body.error.message).toBe("priority must be between 0 and 1000");
    expect((await delegate("top", { agent: "helper", prompt: "go", taskNamespace: "other" })).status).toBe(403);
    expect(await taskCount()).toBe(before);
  });

  it("continues a failed auto-retry child within its budget, and refuses once it is spent", async () => {
    const first = await delegate("top", { agent: "helper", prompt: "try it", auto_retry: true, max_retries: 1 });
    expect(first.status).toBe(201);
    // The helper has no provider, so the child fails at admission.
    for (let i = 0; i < 100 && (await orka.store.get<unknown, { phase?: string }>("Task", "default", first.body.taskName))?.status?.phase !== "Failed"; i++) await new Promise((r) => setTimeout(r, 50));
    const retry = await delegate("top", { agent: "helper", prompt: "try again", auto_retry: true, prior_task: first.body.taskName, feedback: "it failed" });
    expect(retry.status).toBe(201);
    const retried = (await orka.store.get<{ ai: { prompt: string } }, unknown>("Task", "default", retry.body.taskName))!;
    expect(retried.metadata.annotations).toMatchObject({
      "orka.ai/retry-count": "1",
      "orka.ai/max-retries": "1",
      "orka.ai/original-prompt": "try it",
      "orka.ai/retried-from": first.body.taskName,
    });
    expect(retried.metadata.labels).toMatchObject({ "orka.ai/iteration": "2" });
    expect(retried.spec.ai.prompt).toBe("FEEDBACK FROM REVIEW:\nit failed\n\nTASK:\ntry again");
    for (let i = 0; i < 100 && (await orka.store.get<unknown, { phase?: string }>("Task", "default", retry.body.taskName))?.status?.phase !== "Failed"; i++) await new Promise((r) => setTimeout(r, 50));
    const waited = await fetch(`${orka.url}/internal/v1/tasks/default/top/wait`, {
      method: "POST",
      headers: { authorization: `Bearer ${tokens.top}`, "content-type": "application/json" },
      body: JSON.stringify({ tasks: [retry.body.taskName] }),
    });
    const [entry] = ((await waited.json()) as any).results;
    expect(entry).toMatchObject({ phase: "Failed", agent: "helper", failureDetails: { retryCount: 1, maxRetries: 1, message: "no provider configured: set spec.ai.providerRef or the Agent's providerRef" } });
    const before = await taskCount();
    const spent = await delegate("top", { agent: "helper", prompt: "once more", auto_retry: true, prior_task: retry.body.taskName });
    expect(spent.body.error.message).toBe(`retry budget exhausted for ${retry.body.taskName} (1/1)`);
    expect(await taskCount()).toBe(before);
  });

  it("labels every iteration of a prior_task loop 1, 2, 3 in one group, the first once the second exists", async () => {
    const first = (await delegate("top", { agent: "helper", prompt: "draft" })).body.taskName;
    expect((await stored(first)).metadata.labels["orka.ai/iteration"]).toBeUndefined();
    const second = (await delegate("top", { agent: "helper", prompt: "revise", prior_task: first })).body.taskName;
    const third = (await delegate("top", { agent: "helper", prompt: "polish", prior_task: second })).body.taskName;
    const group = (await stored(first)).metadata.uid;
    for (const [name, iteration] of [[first, "1"], [second, "2"], [third, "3"]]) {
      expect((await stored(name)).metadata.labels).toMatchObject({ "orka.ai/iteration": iteration, "orka.ai/iteration-group": group });
    }
    const before = await taskCount();
    expect((await delegate("top", { agent: "helper", prompt: "x", prior_task: "no-such-task" })).body.error.message).toBe('prior task "no-such-task" not found');
    expect(await taskCount()).toBe(before);
  });

  it("deletes an Agent in the namespace asked for, within the task's scope and ownership", async () => {
    const admin = await stored("admin-top");
    await orka.store.create({ apiVersion: API_VERSION, kind: "Agent", metadata: { name: "made-by-hub", namespace: "default", ownerReferences: [{ apiVersion: API_VERSION, kind: "Task", name: "admin-top", uid: admin.metadata.uid, controller: true }] }, spec: {} });
    expect((await deleteAgent("top", "helper", "team-b")).body.error.message).toBe('namespace "team-b" is not permitted for this task: its requester is bound to namespace "default"');
    expect((await deleteAgent("admin-top", "helper", "team-b")).body.error.message).toBe("cannot delete agent team-b/helper: not owned by current task");
    expect((await deleteAgent("admin-top", "made-by-hub", "team-b")).body.error.message).toBe("failed to get agent team-b/made-by-hub: not found");
    expect(await orka.store.get("Agent", "team-b", "helper")).toBeDefined();
    expect(await orka.store.get("Agent", "default", "made-by-hub")).toBeDefined();
    expect((await deleteAgent("admin-top", "made-by-hub", "default")).body).toEqual({ name: "made-by-hub", status: "deleted" });
    expect(await orka.store.get("Agent", "default", "made-by-hub")).toBeUndefined();
  });

  it("delegates into the namespaces the parent's identity may use, as taskNamespace, agentNamespace and the legacy namespace say", async () => {
    const inTeamB = (await delegate("admin-top", { agent: "helper", prompt: "over there", taskNamespace: "team-b" })).body.taskName;
    const legacy = (await delegate("admin-top", { agent: "helper", prompt: "legacy", namespace: "team-b" })).body.taskName;
    const agentOnly = (await delegate("admin-top", { agent: "helper", prompt: "borrowed agent", agentNamespace: "team-b" })).body.taskName;
    const split = (await delegate("admin-top", { agent: "helper", prompt: "split", taskNamespace: "team-b", agentNamespace: "default" })).body.taskName;
    for (const name of [inTeamB, legacy]) {
      const child = await stored(name, "team-b");
      expect(child.spec.agentRef).toEqual({ name: "helper" });
      expect(child.metadata.labels).toMatchObject({ "orka.ai/parent-task": "admin-top" });
      expect(child.metadata.annotations).toMatchObject({ "orka.ai/parent-task-name": "admin-top", "orka.ai/parent-task-namespace": "default" });
      // Owner references cannot cross namespaces.
      expect(child.metadata.ownerReferences).toBeUndefined();
    }
    expect((await stored(agentOnly)).spec.agentRef).toEqual({ name: "helper", namespace: "team-b" });
    expect((await stored(agentOnly)).metadata.ownerReferences[0]).toMatchObject({ kind: "Task", name: "admin-top" });
    expect((await stored(split, "team-b")).spec.agentRef).toEqual({ name: "helper", namespace: "default" });

    // The controller finds the parent across namespaces: the child gets as far as its (missing) provider.
    for (let i = 0; i < 100 && (await stored(inTeamB, "team-b")).status?.phase !== "Failed"; i++) await new Promise((r) => setTimeout(r, 50));
    expect((await stored(inTeamB, "team-b")).status.message).toBe("no provider configured: set spec.ai.providerRef or the Agent's providerRef");
    const waited = await fetch(`${orka.url}/internal/v1/tasks/default/admin-top/wait`, {
      method: "POST",
      headers: { authorization: `Bearer ${tokens["admin-top"]}`, "content-type": "application/json" },
      body: JSON.stringify({ tasks: [inTeamB] }),
    });
    expect(((await waited.json()) as any).results[0]).toMatchObject({ task: inTeamB, phase: "Failed", agent: "helper" });

    // The parent's status mirrors its children in every namespace (here when it is cancelled and completes).
    const cancel = await fetch(`${orka.url}/api/v1/tasks/admin-top/cancel`, { method: "POST", headers: { authorization: `Bearer ${EMBEDDED_ADMIN_TOKEN}`, "content-type": "application/json" }, body: "{}" });
    expect(cancel.status).toBe(200);
    const mirrored = (await stored("admin-top")).status.childTasks.map((c: any) => c.name);
    expect(mirrored).toEqual([inTeamB, legacy, agentOnly, split].sort());
  });

  it("refuses a namespace the parent's identity may not use, naming it, and creates nothing", async () => {
    const before = await taskCount();
    for (const body of [{ taskNamespace: "team-b" }, { agentNamespace: "team-b" }, { namespace: "team-b" }]) {
      const refused = await delegate("top", { agent: "helper", prompt: "go", ...body });
      expect(refused.status).toBe(403);
      expect(refused.body.error.message).toBe('namespace "team-b" is not permitted for this task: its requester is bound to namespace "default"');
    }
    expect((await delegate("top", { agent: "helper", prompt: "go", taskNamespace: "Team_B" })).body.error.message).toMatch(/^taskNamespace: must be lowercase/);
    expect(await taskCount()).toBe(before);
  });

  it("finds the child a repeated call already created (a call cut off after its create), instead of creating another", async () => {
    const parent = (await orka.store.get<any, any>("Task", "default", "top"))!;
    const grants = { gate: new GrantGate(undefined, { record: () => undefined, recent: () => [] }, pino({ level: "silent" })), isolation: { enforce: false }, gitHosts: ["github.com"], effectKey: "uid:key-1" };
    const first = await delegateChild(orka.store, grants, parent, { agent: "helper", prompt: "once" });
    const again = await delegateChild(orka.store, grants, parent, { agent: "helper", prompt: "once" });
    expect(again.taskName).toBe(first.taskName);
    const other = await delegateChild(orka.store, { ...grants, effectKey: "uid:key-2" }, parent, { agent: "helper", prompt: "once" });
    expect(other.taskName).not.toBe(first.taskName);
  });

  it("links and lists the children of a parent whose name is too long for a label", async () => {
    const longName = `a-coordinator-with-a-very-long-name-${"x".repeat(60)}`;
    await orka.store.create(task(longName, {}, { schedule: "0 0 1 1 *" }));
    const parent = (await orka.store.get<any, any>("Task", "default", longName))!;
    const grants = { gate: new GrantGate(undefined, { record: () => undefined, recent: () => [] }, pino({ level: "silent" })), isolation: { enforce: false }, gitHosts: ["github.com"] };
    const { taskName } = await delegateChild(orka.store, grants, parent, { agent: "helper", prompt: "child of a long name" });
    const child = (await orka.store.get<any, any>("Task", "default", taskName))!;
    expect(child.metadata.labels?.["orka.ai/parent-task"]).toMatch(/^a-coordinator-with-a-very-long-name-x{14}-[0-9a-f]{12}$/);
    const listed = await fetch(`${orka.url}/api/v1/tasks/${longName}/children`, { headers: { authorization: `Bearer ${EMBEDDED_ADMIN_TOKEN}` } });
    expect(((await listed.json()) as any).items.map((t: any) => t.metadata.name)).toEqual([taskName]);
  });

  it("deletes a family's messages with the coordinator", async () => {
    const parent = (await orka.store.get("Task", "default", "top"))!;
    orka.coordination.sendMessage({ namespace: "default", fromTask: "kid-a", toTask: "*", parentTask: "top", content: "hi" });
    expect(orka.coordination.readMessages("default", "top", "kid-b", false)).toHaveLength(1);
    await orka.store.delete("Task", "default", parent.metadata.name);
    for (let i = 0; i < 100 && (await orka.store.get("Task", "default", "top")); i++) await new Promise((r) => setTimeout(r, 50));
    expect(orka.coordination.readMessages("default", "top", "kid-b", false)).toEqual([]);
  });
});
