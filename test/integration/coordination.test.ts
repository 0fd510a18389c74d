import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { toolResultsOf, type LlmPeer } from "../peers/llm-server.ts";
import type { OrkaUnderTest } from "../helpers/orka-server.ts";
import { startOrkaWithPeer } from "../helpers/orka-with-peer.ts";

const COORDINATOR_TOOLS = [
  "delegate_task", "wait_for_tasks", "create_container_task", "cancel_task", "send_message", "check_messages",
  "create_pull_request", "list_pull_requests", "check_pr_review_marker", "check_pull_request_ci", "merge_pull_request",
  "auto_merge_pull_request", "review_pull_request", "post_review_comment", "create_agent", "delete_agent", "update_plan",
];
const BUILT = new Set(["delegate_task", "wait_for_tasks", "create_container_task", "cancel_task", "send_message", "check_messages", "create_agent", "delete_agent", "update_plan"]);
const toolNames = (body: any): string[] => (body.tools ?? []).map((t: any) => t.function.name);
const parsed = (body: Record<string, unknown>) => toolResultsOf(body).map((r) => (r.startsWith("{") || r.startsWith("[") ? JSON.parse(r) : r));

// Coordination tools end to end: a scripted coordinator delegates to scripted children through the LLM peer.
describe("multi-agent coordination", () => {
  let orka: OrkaUnderTest;
  let peer: LlmPeer;
  let stop: () => Promise<void>;

  beforeAll(async () => {
    ({ orka, peer, stop } = await startOrkaWithPeer(`
apiVersion: core.orka.ai/v1alpha1
kind: Agent
metadata: {name: boss}
spec: {providerRef: {name: peer}, model: {name: m-boss}, coordination: {enabled: true, maxDepth: 2, allowedAgents: [{name: worker}, {name: slow}]}}
---
apiVersion: core.orka.ai/v1alpha1
kind: Agent
metadata: {name: auto}
spec: {providerRef: {name: peer}, model: {name: m-auto}, coordination: {enabled: true, autonomous: true, maxIterations: 5}}
---
apiVersion: core.orka.ai/v1alpha1
kind: Agent
metadata: {name: auto-max}
spec: {providerRef: {name: peer}, model: {name: m-auto-max}, coordination: {enabled: true, autonomous: true, maxIterations: 2}}
---
apiVersion: core.orka.ai/v1alpha1
kind: Agent
metadata: {name: maker}
spec: {providerRef: {name: peer}, model: {name: m-maker}, coordination: {enabled: true}}
---
apiVersion: core.orka.ai/v1alpha1
kind: Agent
metadata: {name: worker}
spec: {providerRef: {name: peer}, model: {name: m-worker}}
---
apiVersion: core.orka.ai/v1alpha1
kind: Agent
metadata: {name: slow}
spec: {providerRef: {name: peer}, model: {name: m-slow}}
---
apiVersion: core.orka.ai/v1alpha1
kind: Agent
metadata: {name: outsider}
spec: {providerRef: {name: peer}}
`));
  });
  afterAll(() => stop());

  it("delegates, messages between siblings, waits for the results and keeps a plan", async () => {
    // Each child says hello to its sibling, reads its messages until the sibling's hello arrived
    // (at most 8 more reads, 400 ms apart), then answers with what it got.
    peer.setDelay(400, "m-worker");
    const readOrAnswer = (body: Record<string, unknown>) => {
      const last = toolResultsOf(body).at(-1) ?? "";
      return last.startsWith("No new messages") ? { toolCalls: [{ name: "check_messages", arguments: {} }] } : { text: `worker saw: ${last}` };
    };
    peer.script("m-worker", [
      { toolCalls: [{ name: "send_message", arguments: { to_task: "*", content: "hello sibling" } }] },
      { toolCalls: [{ name: "check_messages", arguments: {} }] },
      ...Array.from({ length: 8 }, () => readOrAnswer),
    ]);
    peer.script("m-boss", [
      {
        toolCalls: [
          { name: "delegate_task", arguments: { agent: "worker", prompt: "part one" } },
          { name: "delegate_task", arguments: { agent: "worker", prompt: "part two", priority: 700 } },
          { name: "delegate_task", arguments: { agent: "outsider", prompt: "nope" } },
          { name: "update_plan", arguments: { summary: "two parts delegated", plan_document: "1. split\n2. wait", progress_pct: 50 } },
        ],
      },
      (body) => {
        const [one, two] = parsed(body);
        return { toolCalls: [{ name: "wait_for_tasks", arguments: { tasks: [one.taskName, two.taskName, "not-a-child"], timeout: "30s" } }] };
      },
      (body) => ({ text: `done: ${toolResultsOf(body).at(-1)}` }),
    ]);
    await orka.api("POST", "/api/v1/tasks", { name: "boss-run", type: "ai", agentRef: "boss", prompt: "split the work", priority: 600 });
    // The plan is readable while the coordinator runs, and gone when it completes.
    const task = await orka.waitFor("boss-run", ["Succeeded", "Failed"], 40_000);
    expect(task.status.phase).toBe("Succeeded");

    const first = peer.requests.filter((r) => r.body.model === "m-boss")[0].body;
    // The coordinator bundle of the seed, less the GitHub tools (not built yet).
    expect(toolNames(first)).toEqual(["recall_memory", "remember", "propose_memory", "search_transcript", ...COORDINATOR_TOOLS.filter((n) => BUILT.has(n))]);
    const second = peer.requests.filter((r) => r.body.model === "m-boss")[1].body;
    const [one, two, refused, plan] = parsed(second);
    expect(one).toEqual({ taskName: expect.stringMatching(/^boss-run-child-[0-9a-f]{5}$/), status: "created" });
    expect(refused).toBe('Error executing tool: agent "default/outsider" is not in the allowed agents list');
    expect(plan).toBe("Plan updated: two parts delegated (progress: 50%)");

    const child = (await orka.api("GET", `/api/v1/tasks/${two.taskName}`)).body;
    expect(child.metadata.labels).toMatchObject({ "orka.ai/parent-task": "boss-run", "orka.ai/coordinator": "true", "orka.ai/delegated-agent": "worker" });
    expect(child.metadata.annotations).toMatchObject({ "orka.ai/coordination-depth": "1", "orka.ai/parent-task-name": "boss-run" });
    expect(child.metadata.ownerReferences[0]).toMatchObject({ kind: "Task", name: "boss-run", controller: true });
    expect(child.spec).toMatchObject({ type: "ai", priority: 700, ai: { prompt: "part two" }, requestedBy: { username: "admin", roles: ["admin"] } });
    expect((await orka.api("GET", `/api/v1/tasks/${one.taskName}`)).body.spec.priority).toBe(600);

    const waited = JSON.parse(toolResultsOf(peer.requests.filter((r) => r.body.model === "m-boss")[2].body).at(-1)!);
    expect(waited.completed).toBe(true);
    expect(waited.results.map((r: any) => [r.task, r.phase])).toEqual([[one.taskName, "Succeeded"], [two.taskName, "Succeeded"], ["not-a-child", "Error"]]);
    // Each child received its sibling's broadcast exactly once, and never its own.
    for (const result of waited.results.slice(0, 2)) {
      const seen = JSON.parse(result.result.replace(/^worker saw: /, ""));
      expect(seen).toHaveLength(1);
      expect(seen[0]).toMatchObject({ toTask: "*", content: "hello sibling", parentTask: "boss-run" });
      expect(seen[0].fromTask).not.toBe(result.task);
    }
    expect(toolNames(peer.requests.filter((r) => r.body.model === "m-worker")[0].body)).toEqual(["recall_memory", "remember", "propose_memory", "search_transcript", "send_message", "check_messages"]);
    expect((await orka.api("GET", "/api/v1/tasks/boss-run")).body.status.childTasks).toHaveLength(2);
    expect((await orka.api("GET", "/api/v1/tasks/boss-run/plan")).body.error.message).toBe("no plan found for this task");
  });

  it("cancels a running child through the controller, and reports a finished one's phase", async () => {
    peer.script("m-slow", [{ toolCalls: [{ name: "wait_for_tasks", arguments: { tasks: ["never-ending"], timeout: "60s" } }] }, { text: "late" }]);
    peer.script("m-boss", [
      { toolCalls: [{ name: "delegate_task", arguments: { agent: "slow", prompt: "take your time" } }] },
      (body) => ({ toolCalls: [{ name: "cancel_task", arguments: { task_name: parsed(body)[0].taskName, reason: "changed my mind" } }] }),
      (body) => ({ toolCalls: [{ name: "wait_for_tasks", arguments: { tasks: [parsed(body)[0].taskName], timeout: "20s" } }] }),
      (body) => ({ toolCalls: [{ name: "cancel_task", arguments: { task_name: parsed(body)[0].taskName } }] }),
      { text: "cancelled" },
    ]);
    await orka.api("POST", "/api/v1/tasks", { name: "canceller", type: "ai", agentRef: "boss", prompt: "start and stop" });
    expect((await orka.waitFor("canceller", ["Succeeded", "Failed"], 40_000)).status.phase).toBe("Succeeded");
    const last = peer.requests.filter((r) => r.body.model === "m-boss").at(-1)!.body;
    const [delegated, cancelled, waited, again] = parsed(last);
    expect(cancelled).toEqual({ taskName: delegated.taskName, status: "cancellation requested" });
    expect(waited.results[0]).toMatchObject({ phase: "Cancelled" });
    expect(again).toEqual({ taskName: delegated.taskName, status: "Cancelled" });
    const child = (await orka.api("GET", `/api/v1/tasks/${delegated.taskName}`)).body;
    expect(child.status.message).toBe("cancelled by parent task: changed my mind");
  });

  it("creates container children and refuses a child created by hand with Orka provenance", async () => {
    peer.script("m-boss", [
      { toolCalls: [{ name: "create_container_task", arguments: { command: ["sh", "-c", "echo from the container child"] } }] },
      (body) => ({ toolCalls: [{ name: "wait_for_tasks", arguments: { tasks: [parsed(body)[0].data.name] } }] }),
      { text: "ok" },
    ]);
    await orka.api("POST", "/api/v1/tasks", { name: "containers", type: "ai", agentRef: "boss", prompt: "run it" });
    expect((await orka.waitFor("containers", ["Succeeded", "Failed"], 30_000)).status.phase).toBe("Succeeded");
    const [created, waited] = parsed(peer.requests.filter((r) => r.body.model === "m-boss").at(-1)!.body);
    expect(created).toMatchObject({ success: true, data: { phase: "Pending", message: "Task created" } });
    expect(waited.results[0]).toMatchObject({ phase: "Succeeded", result: "from the container child\n" });

    const forged = await orka.api("POST", "/api/v1/tasks", { name: "forged", type: "container", command: ["true"], labels: { "orka.ai/parent-task": "containers" } });
    expect(forged.body.error.message).toBe('label "orka.ai/parent-task" is reserved');
  });

  it("runs an autonomous coordinator iteration by iteration until goal_complete, each iteration seeing the plan", async () => {
    const iterationOf = (body: any) => Number(/Current iteration: (\d+)/.exec(body.messages[0].content)![1]);
    peer.script("m-auto", [
      (body) => ({ toolCalls: [{ name: "update_plan", arguments: { summary: `step ${iterationOf(body)}`, plan_document: `did step ${iterationOf(body)}`, progress_pct: 50 * iterationOf(body), goal_complete: iterationOf(body) === 2 } }] }),
      { text: "iteration done" },
    ]);
    await orka.api("POST", "/api/v1/tasks", { name: "autonomous", type: "ai", agentRef: "auto", prompt: "reach the goal" });
    const task = await orka.waitFor("autonomous", ["Succeeded", "Failed"], 30_000);
    expect(task.status).toMatchObject({ phase: "Succeeded", message: "goal complete after 2 iterations: step 2", iteration: 1 });
    const firsts: any[] = peer.requests.filter((r: any) => r.body.model === "m-auto" && r.body.messages.length === 2);
    expect(firsts).toHaveLength(2);
    expect(firsts[0].body.messages[1].content).toBe("reach the goal");
    expect(firsts[1].body.messages[1].content).toBe("## Previous Plan State\n\ndid step 1\n\n## Task\n\nreach the goal");

    peer.script("m-auto-max", [{ text: "still going" }]);
    await orka.api("POST", "/api/v1/tasks", { name: "bounded", type: "ai", agentRef: "auto-max", prompt: "never done" });
    expect((await orka.waitFor("bounded", ["Succeeded", "Failed"], 30_000)).status.message).toBe("reached max iterations (2)");
  });

  it("creates its own specialist Agent, delegates to it, and may delete only Agents it created", async () => {
    peer.script("m-writer", [{ text: "written by the specialist" }]);
    peer.script("m-maker", [
      {
        toolCalls: [
          { name: "create_agent", arguments: { name: "Writer", provider: "peer", model: "peer/m-writer", systemPrompt: "You write.", tools: ["remember"] } },
          { name: "create_agent", arguments: { name: "hacker", provider: "peer", model: "m-writer", tools: ["web_fetch"] } },
          { name: "create_agent", arguments: { name: "lost", provider: "nowhere", model: "m" } },
        ],
      },
      (body) => ({ toolCalls: [{ name: "delegate_task", arguments: { agent: parsed(body)[0].agentName, prompt: "write it" } }] }),
      (body) => ({ toolCalls: [{ name: "wait_for_tasks", arguments: { tasks: [parsed(body)[3].taskName] } }] }),
      (body) => ({
        toolCalls: [
          { name: "delete_agent", arguments: { name: "worker" } },
          { name: "delete_agent", arguments: { name: parsed(body)[0].agentName } },
        ],
      }),
      { text: "done" },
    ]);
    await orka.api("POST", "/api/v1/tasks", { name: "maker-run", type: "ai", agentRef: "maker", prompt: "build a team" });
    expect((await orka.waitFor("maker-run", ["Succeeded", "Failed"], 30_000)).status.phase).toBe("Succeeded");
    const results = parsed(peer.requests.filter((r) => r.body.model === "m-maker").at(-1)!.body);
    const [created, escalated, lost, , waited, refused, deleted] = results;
    expect(created).toEqual({ agentName: expect.stringMatching(/^maker-run-writer-[0-9a-f]{6}$/), namespace: "default", status: "created" });
    expect(escalated).toBe("Error executing tool: tools not held by this task cannot be granted: web_fetch");
    expect(lost).toBe('Error executing tool: provider "nowhere" not found; coordinator uses "peer"');
    expect(waited.results[0]).toMatchObject({ phase: "Succeeded", result: "written by the specialist" });
    expect(refused).toBe("Error executing tool: cannot delete agent default/worker: not owned by current task");
    expect(deleted).toEqual({ name: created.agentName, status: "deleted" });
    expect((await orka.api("GET", "/api/v1/agents/worker")).status).toBe(200);
    expect((await orka.api("GET", `/api/v1/agents/${created.agentName}`)).status).toBe(404);
  });
});
