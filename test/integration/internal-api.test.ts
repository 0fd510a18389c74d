import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashToken } from "../../src/store/data-store.ts";
import { API_VERSION } from "../../src/resources/meta.ts";
import type { RunningOrka } from "../../src/server.ts";
import { startEmbeddedOrka } from "../helpers/embedded.ts";

// /internal/v1 trusts nothing but the attempt token, and only for that attempt's own Task.
describe("internal worker API authorization", () => {
  let orka: RunningOrka;
  const token = "attempt-token-for-task-a";
  const post = (path: string, body: string, bearer = token, type = "text/plain") =>
    fetch(`${orka.url}/internal/v1/${path}`, { method: "POST", headers: { authorization: `Bearer ${bearer}`, "content-type": type }, body });

  beforeAll(async () => {
    orka = await startEmbeddedOrka();
    const uids: string[] = [];
    // Yearly schedules: the controller leaves both Tasks alone (Scheduled), so only this test's attempt acts.
    for (const name of ["task-a", "task-b"]) {
      const spec = { type: "container", command: ["sleep", "30"], priority: 500, schedule: "0 0 1 1 *" };
      const task = await orka.store.create({ apiVersion: API_VERSION, kind: "Task", metadata: { name, namespace: "default" }, spec });
      uids.push(task.metadata.uid!);
    }
    orka.data.createAttempt({ id: "a-1", namespace: "default", task: "task-a", taskUid: uids[0], number: 1, allowedTools: ["remember", "cancel_task"] }, hashToken(token));
  });
  afterAll(() => orka.close());

  it("accepts the attempt's own result and refuses empty and oversized ones", async () => {
    expect((await post("results/default/task-a", "the answer")).status).toBe(204);
    expect(orka.data.getResult("default", "task-a")).toBe("the answer");
    const empty = await post("results/default/task-a", "");
    expect([empty.status, ((await empty.json()) as any).error.message]).toEqual([400, "empty request body"]);
    const huge = await post("results/default/task-a", "x".repeat(10 * 1024 * 1024 + 1));
    expect([huge.status, ((await huge.json()) as any).error.message]).toEqual([413, "result exceeds 10MB limit"]);
  });

  it("refuses another Task, another namespace, an unknown token and a finished attempt", async () => {
    const other = await post("results/default/task-b", "forged");
    expect([other.status, ((await other.json()) as any).error.message]).toEqual([403, "token is not valid for task task-b"]);
    const elsewhere = await post("results/team/task-a", "forged");
    expect([elsewhere.status, ((await elsewhere.json()) as any).error.message]).toEqual([403, "namespace not allowed"]);
    expect((await post("results/default/task-a", "forged", "made-up")).status).toBe(401);
    expect(orka.data.getResult("default", "task-b")).toBeUndefined();

    const events = await post("events/default/task/task-a", JSON.stringify({ type: "Note", summary: "from the worker" }), token, "application/json");
    expect(events.status).toBe(204);
    const tool = await post("tools/default/task-a/anything", JSON.stringify({ arguments: {} }), token, "application/json");
    expect([tool.status, ((await tool.json()) as any).error.message]).toEqual([403, 'tool "anything" was not enabled for this task']);

    // Tools the attempt was not given are refused on the control plane too, before anything happens.
    const delegated = await post("tasks/default/task-a/delegate", JSON.stringify({ agent: "anyone", prompt: "work" }), token, "application/json");
    expect([delegated.status, ((await delegated.json()) as any).error.message]).toEqual([403, 'tool "delegate_task" was not enabled for this task']);
    const recalled = await fetch(`${orka.url}/internal/v1/memories/default`, { headers: { authorization: `Bearer ${token}` } });
    expect([recalled.status, ((await recalled.json()) as any).error.message]).toEqual([403, 'tool "recall_memory" was not enabled for this task']);
    const plan = await post("plans/default/task-a", JSON.stringify({ summary: "s", plan_document: "d" }), token, "application/json");
    expect(plan.status).toBe(403);
    expect((await orka.store.list("Task", { namespace: "default" })).items.map((t) => t.metadata.name).sort()).toEqual(["task-a", "task-b"]);

    // Memory: a worker only proposes, always pending, for its own Task, in its own namespace.
    const proposed = await post("memory-proposals/default", JSON.stringify({ title: "t", type: "memory", content: "c", status: "applied", reviewer: "me", taskName: "task-b" }), token, "application/json");
    expect(proposed.status).toBe(201);
    expect(await proposed.json()).toMatchObject({ status: "pending", taskName: "task-a" });
    const mismatch = await post("memory-proposals/default", JSON.stringify({ title: "t", namespace: "team" }), token, "application/json");
    expect([mismatch.status, ((await mismatch.json()) as any).error.message]).toEqual([400, "memory proposal namespace mismatch"]);
    const foreign = await fetch(`${orka.url}/internal/v1/memories/team`, { headers: { authorization: `Bearer ${token}` } });
    expect([foreign.status, ((await foreign.json()) as any).error.message]).toEqual([403, "cross-namespace access denied"]);
    const review = await post("memory-proposals/default/x/review", "{}", token, "application/json");
    expect(review.status).toBe(404);

    // cancel_task: only the parent's current worker, only its own children, never coding-agent children.
    const cancel = (taskName: string) => post("tasks/default/task-a/cancel-child", JSON.stringify({ taskName }), token, "application/json");
    const notCurrent = await cancel("task-b");
    expect([notCurrent.status, ((await notCurrent.json()) as any).error.message]).toEqual([403, "caller is not the current worker for this task"]);
    const parent = (await orka.store.get("Task", "default", "task-a"))!;
    await orka.store.updateStatus({ ...parent, status: { ...(parent.status as object), jobName: "a-1" } });
    const notChild = await cancel("task-b");
    expect([notChild.status, ((await notChild.json()) as any).error.message]).toEqual([403, 'task "task-b" is not a child of the current task "task-a"']);
    const link = { labels: { "orka.ai/parent-task": "task-a" }, annotations: { "orka.ai/parent-task-name": "task-a" } };
    await orka.store.create({ apiVersion: API_VERSION, kind: "Task", metadata: { name: "coder", namespace: "default", ...link }, spec: { type: "agent", agentRef: { name: "nobody" }, priority: 500 } });
    const coding = await cancel("coder");
    expect([coding.status, ((await coding.json()) as any).error.message]).toEqual([409, "cancel_task cannot cancel coding-agent runtime children"]);

    orka.data.finishAttempt("a-1", { state: "succeeded", exitCode: 0 });
    const late = await post("results/default/task-a", "too late");
    expect([late.status, ((await late.json()) as any).error.message]).toEqual([403, "attempt is no longer running"]);
  });
});
