import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ANNOTATION, API_VERSION, LABEL, type Resource } from "../../src/resources/meta.ts";
import type { TaskSpec, TaskStatus } from "../../src/resources/task.ts";
import type { RunningOrka } from "../../src/server.ts";
import { startEmbeddedOrka } from "../helpers/embedded.ts";

type Task = Resource<TaskSpec, TaskStatus>;

// Child guardrails and schedules: children carry Orka-managed provenance that clients cannot set
// over REST, so these tests write through the embedded store, as delegate_task will.
describe("child limits and schedules (embedded server)", () => {
  let orka: RunningOrka;
  beforeAll(async () => {
    orka = await startEmbeddedOrka({ workerSlots: 10 });
    const agent = (name: string, spec: object) => orka.store.create({ apiVersion: API_VERSION, kind: "Agent", metadata: { name, namespace: "default" }, spec });
    await agent("coordinator", { coordination: { enabled: true, maxDepth: 3, maxConcurrentChildren: 5, allowedAgents: [{ name: "worker" }] } });
    await agent("worker", {});
    await agent("stranger", {});
    await orka.store.create(containerTask("parent", ["sleep", "30"], { agentRef: { name: "coordinator" } }));
  });
  afterAll(() => orka.close());

  const containerTask = (name: string, command: string[], spec: Partial<TaskSpec> = {}, child?: { depth: number; agent?: string }): Task => ({
    apiVersion: API_VERSION,
    kind: "Task",
    metadata: {
      name,
      namespace: "default",
      ...(child
        ? {
            labels: { [LABEL.parentTask]: "parent" },
            annotations: { [ANNOTATION.parentTaskName]: "parent", [ANNOTATION.coordinationDepth]: String(child.depth) },
          }
        : {}),
    },
    spec: { type: "container", command, priority: 500, ...(child ? { agentRef: { name: child.agent ?? "worker" } } : {}), ...spec },
  });

  const phaseOf = async (name: string) => (await orka.store.get<TaskSpec, TaskStatus>("Task", "default", name))?.status;
  const waitUntil = async (check: () => Promise<boolean>, timeoutMs = 15_000) => {
    const deadline = Date.now() + timeoutMs;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error("condition not met in time");
      await new Promise((r) => setTimeout(r, 100));
    }
  };

  it("keeps the 6th child Pending under maxConcurrentChildren 5, then runs it when a slot frees", async () => {
    for (let i = 1; i <= 6; i++) {
      await orka.store.create(containerTask(`child-${i}`, ["sleep", i === 1 ? "2" : "30"], {}, { depth: 1 }));
      await waitUntil(async () => (await phaseOf(`child-${i}`))?.phase !== undefined);
      if (i < 6) await waitUntil(async () => (await phaseOf(`child-${i}`))?.phase === "Running");
    }
    await new Promise((r) => setTimeout(r, 500));
    const sixth = await phaseOf("child-6");
    expect(sixth?.phase).toBe("Pending");
    expect(sixth?.message).toBe("waiting: parent has 5 running children (max 5)");
    await waitUntil(async () => (await phaseOf("child-1"))?.phase === "Succeeded");
    await waitUntil(async () => (await phaseOf("child-6"))?.phase === "Running", 20_000);
  });

  it("fails children beyond maxDepth or outside allowedAgents with the exact messages", async () => {
    await orka.store.create(containerTask("too-deep", ["true"], {}, { depth: 4 }));
    await orka.store.create(containerTask("bad-depth", ["true"], {}, { depth: 0 }));
    await orka.store.create(containerTask("not-allowed", ["true"], {}, { depth: 1, agent: "stranger" }));
    await waitUntil(async () => (await phaseOf("not-allowed"))?.phase === "Failed");
    expect((await phaseOf("too-deep"))?.message).toBe("coordination depth 4 exceeds max 3");
    expect((await phaseOf("bad-depth"))?.message).toBe("coordination depth annotation is invalid");
    expect((await phaseOf("not-allowed"))?.message).toBe('agent "stranger" not in parent\'s allowedAgents');
  });

  it("mirrors children into the parent's status.childTasks, sorted by name", async () => {
    await waitUntil(async () => ((await phaseOf("parent"))?.childTasks?.length ?? 0) >= 9);
    const children = (await phaseOf("parent"))!.childTasks!;
    expect(children.map((c) => c.name)).toEqual([...children.map((c) => c.name)].sort());
    expect(children.find((c) => c.name === "too-deep")).toMatchObject({ agent: "worker", phase: "Failed" });
  });

  it("runs a schedule as <parent>-<unix> children, keeps 3, and deleting the parent removes them and their data", async () => {
    await orka.store.create(containerTask("ticker", ["echo", "tick"], { schedule: "* * * * * *" }));
    await waitUntil(async () => {
      const runs = await orka.store.list<TaskSpec, TaskStatus>("Task", { labelSelector: `${LABEL.parentTask}=ticker,${LABEL.scheduledRun}=true` });
      return runs.items.filter((t) => t.status?.phase === "Succeeded").length >= 3 && (await phaseOf("ticker"))?.lastScheduleTime !== undefined;
    }, 20_000);
    await new Promise((r) => setTimeout(r, 2500));
    const runs = await orka.store.list<TaskSpec, TaskStatus>("Task", { labelSelector: `${LABEL.parentTask}=ticker` });
    for (const run of runs.items) {
      expect(run.metadata.name).toMatch(/^ticker-\d{10}$/);
      expect(run.spec.schedule).toBeUndefined();
      expect(run.metadata.ownerReferences?.[0]).toMatchObject({ kind: "Task", name: "ticker" });
    }
    expect(runs.items.filter((t) => t.status?.phase === "Succeeded").length).toBeLessThanOrEqual(3);
    const parent = await phaseOf("ticker");
    expect(parent?.phase).toBe("Scheduled");
    expect(Date.parse(parent!.nextScheduleTime!)).toBeGreaterThan(Date.now() - 1000);

    const aRun = runs.items.find((t) => t.status?.phase === "Succeeded")!.metadata.name;
    expect(orka.data.getResult("default", aRun)).toContain("tick");
    await orka.store.delete("Task", "default", "ticker");
    await waitUntil(async () => (await orka.store.list("Task", { labelSelector: `${LABEL.parentTask}=ticker` })).items.length === 0 && !(await phaseOf("ticker")));
    expect(orka.data.getResult("default", aRun)).toBeUndefined();
    expect(orka.data.listEvents("default", aRun)).toEqual([]);
  });
});
