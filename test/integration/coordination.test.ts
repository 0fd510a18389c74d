import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { toolResultsOf, type LlmPeer, type PeerTurn } from "../peers/llm-server.ts";
import type { OrkaUnderTest } from "../helpers/orka-server.ts";
import { startOrkaWithPeer } from "../helpers/orka-with-peer.ts";

const MEMORY_TOOLS = ["recall_memory", "remember", "propose_memory", "search_transcript"];
const COORDINATOR_TOOLS = [
  "delegate_task", "wait_for_tasks", "create_container_task", "cancel_task", "send_message", "check_messages",
  "create_pull_request", "list_pull_requests", "check_pr_review_marker", "check_pull_request_ci", "merge_pull_request",
  "auto_merge_pull_request", "review_pull_request", "post_review_comment", "create_agent", "delete_agent", "update_plan",
];
const toolNames = (body: any): string[] => (body.tools ?? []).map((t: any) => t.function.name);
const parsed = (body: Record<string, unknown>) => toolResultsOf(body).map((r) => (r.startsWith("{") || r.startsWith("[") ? JSON.parse(r) : r));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The tool calls of a conversation so far, each with its result (OpenAI wire format). */
const exchanges = (body: any): { name: string; args: any; result: string }[] => {
  const results = new Map((body.messages as any[]).filter((m) => m.role === "tool").map((m) => [m.tool_call_id, String(m.content)]));
  return (body.messages as any[]).flatMap((m) => (m.tool_calls ?? []).map((c: any) => ({ name: c.function.name, args: JSON.parse(c.function.arguments || "{}"), result: results.get(c.id) ?? "" })));
};
const messagesIn = (result: string): any[] => (result.startsWith("[") ? JSON.parse(result) : []);
const MAX_READS = 7; // with the broadcast, the direct sends and the answer: within a child's 10 turns

/**
 * A delegated child: after its broadcast it peeks (mark_read: false) until its sibling's broadcast is
 * there, reads it again (marking it read), messages the sibling directly and tries the coordinator
 * (not a sibling), reads until the direct message arrives, and reports all it saw.
 */
const siblingTurn = (body: any): PeerTurn => {
  const done = exchanges(body);
  const reads = done.filter((e) => e.name === "check_messages");
  const peek = reads.find((e) => e.args.mark_read === false && messagesIn(e.result).length > 0);
  const marked = reads.filter((e) => e.args.mark_read === undefined);
  const out = reads.length >= MAX_READS;
  if (!peek && !out) return { toolCalls: [{ name: "check_messages", arguments: { mark_read: false } }] };
  if (peek && marked.length === 0 && !out) return { toolCalls: [{ name: "check_messages", arguments: {} }] };
  const broadcast = peek && messagesIn(peek.result)[0];
  if (broadcast && !done.some((e) => e.name === "send_message" && e.args.to_task !== "*")) {
    return {
      toolCalls: [
        { name: "send_message", arguments: { to_task: broadcast.fromTask, content: "just for you" } },
        { name: "send_message", arguments: { to_task: "boss-run", content: "to the coordinator" } },
      ],
    };
  }
  const later = marked.slice(1).flatMap((e) => messagesIn(e.result));
  if (!later.some((m) => m.toTask !== "*") && !out) return { toolCalls: [{ name: "check_messages", arguments: {} }] };
  const sent = done.filter((e) => e.name === "send_message" && e.args.to_task !== "*").map((e) => e.result);
  return { text: `worker saw: ${JSON.stringify({ peeked: peek && messagesIn(peek.result), reread: marked[0] && messagesIn(marked[0].result), later, sent })}` };
};

// Coordination tools end to end: a scripted coordinator delegates to scripted children through the LLM peer.
describe("multi-agent coordination", () => {
  let orka: OrkaUnderTest;
  let peer: LlmPeer;
  let stop: () => Promise<void>;
  const workDir = mkdtempSync(join(tmpdir(), "orka-coordination-work-"));
  const requestsFor = (model: string) => peer.requests.filter((r) => r.body.model === model);

  beforeAll(async () => {
    ({ orka, peer, stop } = await startOrkaWithPeer(`
apiVersion: core.orka.ai/v1alpha1
kind: Agent
metadata: {name: boss}
spec: {providerRef: {name: peer}, model: {name: m-boss}, coordination: {enabled: true, maxDepth: 2, allowedAgents: [{name: worker}, {name: slow}, {name: reporter}]}}
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
metadata: {name: reporter}
spec: {providerRef: {name: peer}, model: {name: m-reporter}}
---
apiVersion: core.orka.ai/v1alpha1
kind: Agent
metadata: {name: outsider}
spec: {providerRef: {name: peer}}
`, { ORKA_WORK_DIR: workDir }));
  });
  afterAll(async () => {
    await stop();
    rmSync(workDir, { recursive: true, force: true });
  });

  it("delegates, messages between siblings, waits for the results and keeps a plan", async () => {
    peer.setDelay(400, "m-worker");
    peer.script("m-worker", [{ toolCalls: [{ name: "send_message", arguments: { to_task: "*", content: "hello sibling" } }] }, ...Array.from({ length: 10 }, () => siblingTurn)]);
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

    const firstBossRequest = requestsFor("m-boss")[0].body;
    // The seed's coordinator bundle, GitHub pull request tools included.
    expect(toolNames(firstBossRequest)).toEqual([...MEMORY_TOOLS, ...COORDINATOR_TOOLS]);
    const second = requestsFor("m-boss")[1].body;
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

    const waited = JSON.parse(toolResultsOf(requestsFor("m-boss")[2].body).at(-1)!);
    expect(waited.completed).toBe(true);
    expect(waited.results.map((r: any) => [r.task, r.phase])).toEqual([[one.taskName, "Succeeded"], [two.taskName, "Succeeded"], ["not-a-child", "Error"]]);
    const names = [one.taskName, two.taskName];
    for (const [index, result] of waited.results.slice(0, 2).entries()) {
      const self = names[index];
      const other = names[1 - index];
      const seen = JSON.parse(result.result.replace(/^worker saw: /, ""));
      // The sibling's broadcast, once, never its own; mark_read: false left it unread, so it came again once.
      expect(seen.peeked).toEqual([expect.objectContaining({ fromTask: other, toTask: "*", content: "hello sibling", parentTask: "boss-run" })]);
      expect(seen.reread.map((m: any) => m.id)).toEqual([seen.peeked[0].id]);
      // Read and marked: the broadcast never came back; the sibling's direct message arrived once.
      expect(seen.later).toEqual([expect.objectContaining({ fromTask: other, toTask: self, content: "just for you" })]);
      expect(seen.sent).toEqual([`Message sent to ${other}`, 'Error executing tool: target task "boss-run" is not a sibling in coordinator family "boss-run"']);
    }
    expect(toolNames(requestsFor("m-worker")[0].body)).toEqual([...MEMORY_TOOLS, "send_message", "check_messages"]);
    expect((await orka.api("GET", "/api/v1/tasks/boss-run")).body.status.childTasks).toHaveLength(2);
    expect((await orka.api("GET", "/api/v1/tasks/boss-run/plan")).body.error.message).toBe("no plan found for this task");
  });

  it("passes a child's structured result to the coordinator field by field, without its diff", async () => {
    const envelope = {
      version: 1,
      summary: "Reviewed the change",
      diff: `diff --git a/x.ts b/x.ts\n${"+DIFFLINE\n".repeat(20_000)}`,
      verdict: "CHANGES_NEEDED",
      feedback: "rename foo to bar",
      baseSHA: "a".repeat(40),
      files: ["src/x.ts"],
      data: { rows: "r".repeat(40_000) },
    };
    peer.script("m-reporter", [{ text: JSON.stringify(envelope) }]);
    peer.script("m-boss", [
      { toolCalls: [{ name: "delegate_task", arguments: { agent: "reporter", prompt: "review it" } }] },
      (body) => ({ toolCalls: [{ name: "wait_for_tasks", arguments: { tasks: [parsed(body)[0].taskName], timeout: "30s" } }] }),
      { text: "reviewed" },
    ]);
    await orka.api("POST", "/api/v1/tasks", { name: "review-run", type: "ai", agentRef: "boss", prompt: "get it reviewed" });
    expect((await orka.waitFor("review-run", ["Succeeded", "Failed"], 30_000)).status.phase).toBe("Succeeded");
    const [delegated, waited] = parsed(requestsFor("m-boss").at(-1)!.body);
    expect(waited.results).toEqual([
      {
        task: delegated.taskName,
        phase: "Succeeded",
        agent: "reporter",
        result: "Reviewed the change",
        version: 1,
        summary: "Reviewed the change",
        verdict: "CHANGES_NEEDED",
        feedback: "rename foo to bar",
        baseSHA: "a".repeat(40),
        files: ["src/x.ts"],
        data: { truncated: true, originalBytes: JSON.stringify(envelope.data).length, message: "structured data payload exceeded wait_for_tasks inline limit; use artifact references for large outputs" },
      },
    ]);
    // The parent mirrors its children's results as they end, which may land just after the parent's own end.
    let mirrored: { result?: string } = {};
    for (let tries = 0; tries < 100 && mirrored.result === undefined; tries++) {
      if (tries > 0) await new Promise((resolve) => setTimeout(resolve, 100));
      [mirrored] = (await orka.api("GET", "/api/v1/tasks/review-run")).body.status.childTasks;
    }
    expect(mirrored.result).not.toContain("DIFFLINE");
    expect(mirrored.result).toContain('"verdict":"CHANGES_NEEDED"');
  });

  it("cancels a running child through the controller, and reports a finished one's phase", async () => {
    // The child's first model request is held for 6 s: it is cancelled while it waits for the answer.
    peer.setDelay(6000, "m-slow");
    peer.script("m-slow", [{ toolCalls: [{ name: "remember", arguments: { content: "the cancelled child kept running" } }] }, { text: "late" }]);
    peer.script("m-boss", [
      { toolCalls: [{ name: "delegate_task", arguments: { agent: "slow", prompt: "take your time" } }] },
      (body) => ({ toolCalls: [{ name: "wait_for_tasks", arguments: { tasks: [parsed(body)[0].taskName], timeout: "2s" } }] }),
      (body) => ({ toolCalls: [{ name: "cancel_task", arguments: { task_name: parsed(body)[0].taskName, reason: "changed my mind" } }] }),
      (body) => ({ toolCalls: [{ name: "wait_for_tasks", arguments: { tasks: [parsed(body)[0].taskName], timeout: "20s" } }] }),
      (body) => ({ toolCalls: [{ name: "cancel_task", arguments: { task_name: parsed(body)[0].taskName } }] }),
      { text: "cancelled" },
    ]);
    await orka.api("POST", "/api/v1/tasks", { name: "canceller", type: "ai", agentRef: "boss", prompt: "start and stop" });
    expect((await orka.waitFor("canceller", ["Succeeded", "Failed"], 40_000)).status.phase).toBe("Succeeded");
    const [delegated, running, cancelled, waited, again] = parsed(requestsFor("m-boss").at(-1)!.body);
    // It was running and had asked the model when it was cancelled.
    expect(running).toMatchObject({ completed: false, results: [{ task: delegated.taskName, phase: "Running" }] });
    expect(requestsFor("m-slow")).toHaveLength(1);
    expect(cancelled).toEqual({ taskName: delegated.taskName, status: "cancellation requested" });
    expect(waited.results[0]).toMatchObject({ phase: "Cancelled" });
    expect(again).toEqual({ taskName: delegated.taskName, status: "Cancelled" });
    const child = (await orka.api("GET", `/api/v1/tasks/${delegated.taskName}`)).body;
    expect(child.status.message).toBe("cancelled by parent task: changed my mind");

    // Its worker is gone: its attempt directory is removed, and once the held answer has come back
    // nothing acts on it (no second model request, no memory proposal, no result).
    const attemptDir = join(workDir, child.status.jobName);
    for (let i = 0; i < 50 && existsSync(attemptDir); i++) await sleep(100);
    expect(existsSync(attemptDir)).toBe(false);
    await sleep(5000);
    expect(requestsFor("m-slow")).toHaveLength(1);
    expect((await orka.api("GET", `/api/v1/memory-proposals?taskName=${delegated.taskName}`)).body.items).toEqual([]);
    expect((await orka.api("GET", `/api/v1/tasks/${delegated.taskName}/result`)).body.error).toEqual({ code: 404, message: "task has no result" });
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

    // What the build lacks is said once for the Task, not on every iteration, and not at all once it is built.
    const warnings = (await orka.api("GET", "/api/v1/tasks/autonomous/events?type=Warning")).body.events.map((e: any) => e.summary);
    const missing = COORDINATOR_TOOLS.filter((name) => !toolNames(firsts[0].body).includes(name));
    expect(warnings).toEqual(missing.length ? [`not offered to the model because this Orka build does not implement them yet: ${missing.join(", ")}`] : []);

    peer.script("m-auto-max", [{ text: "still going" }]);
    await orka.api("POST", "/api/v1/tasks", { name: "bounded", type: "ai", agentRef: "auto-max", prompt: "never done" });
    expect((await orka.waitFor("bounded", ["Succeeded", "Failed"], 30_000)).status.message).toBe("reached max iterations (2)");
  });

  it("creates its own specialist Agent with a persona, delegates to it, and may delete only Agents it created", async () => {
    const soul = "You are Quill: meticulous, dry, fond of semicolons.";
    peer.script("m-writer", [{ text: "written by the specialist" }]);
    peer.script("m-maker", [
      {
        toolCalls: [
          { name: "create_agent", arguments: { name: "Writer", provider: "peer", model: "peer/m-writer", systemPrompt: "You write.", soul, tools: ["remember"] } },
          { name: "create_agent", arguments: { name: "hacker", provider: "peer", model: "m-writer", tools: ["web_fetch"] } },
          { name: "create_agent", arguments: { name: "lost", provider: "nowhere", model: "m", temperature: 0.2 } },
          { name: "create_agent", arguments: { name: "verbose", provider: "peer", model: "m", soul: "x".repeat(9 * 1024) } },
          { name: "create_agent", arguments: { name: "unpinned", provider: "peer", model: "m", soul: { configMapRef: { name: "souls", key: "w" } } } },
        ],
      },
      (body) => ({ toolCalls: [{ name: "delegate_task", arguments: { agent: parsed(body)[0].agentName, prompt: "write it" } }] }),
      (body) => ({ toolCalls: [{ name: "wait_for_tasks", arguments: { tasks: [parsed(body)[5].taskName] } }] }),
      (body) => ({
        toolCalls: [
          { name: "delete_agent", arguments: { name: "worker" } },
          { name: "delete_agent", arguments: { name: parsed(body)[0].agentName, namespace: "elsewhere" } },
          { name: "delete_agent", arguments: { name: parsed(body)[0].agentName } },
        ],
      }),
      { text: "done" },
    ]);
    const agentsBefore = (await orka.api("GET", "/api/v1/agents")).body.items.length;
    await orka.api("POST", "/api/v1/tasks", { name: "maker-run", type: "ai", agentRef: "maker", prompt: "build a team" });
    expect((await orka.waitFor("maker-run", ["Succeeded", "Failed"], 30_000)).status.phase).toBe("Succeeded");
    const results = parsed(requestsFor("m-maker").at(-1)!.body);
    const [created, escalated, lost, tooLong, unpinned, , waited, refused, elsewhere, deleted] = results;
    expect(created).toEqual({ agentName: expect.stringMatching(/^maker-run-writer-[0-9a-f]{6}$/), namespace: "default", status: "created" });
    expect(escalated).toBe("Error executing tool: tools not held by this task cannot be granted: web_fetch");
    expect(lost).toBe('Error executing tool: provider "nowhere" not found; coordinator uses "peer"\n[ignored arguments this tool does not take: temperature]');
    expect(tooLong).toBe("Error executing tool: spec.soul.inline: is 9216 bytes; at most 8192 are allowed");
    expect(unpinned).toBe("Error executing tool: spec.soul.digest: is required with configMapRef: sha256:<64 hex> of the text");
    expect(waited.results[0]).toMatchObject({ phase: "Succeeded", result: "written by the specialist" });
    // The persona, stored on the Agent, reaches the specialist's system prompt after its role.
    const system = (requestsFor("m-writer")[0].body as any).messages[0].content as string;
    expect(system.startsWith(`You write.\n\n## Agent persona\n\n`)).toBe(true);
    expect(system.indexOf(soul)).toBeLessThan(system.indexOf("## End of Agent persona"));
    expect(refused).toBe("Error executing tool: cannot delete agent default/worker: not owned by current task");
    expect(elsewhere).toBe(`Error executing tool: failed to get agent elsewhere/${created.agentName}: not found`);
    expect(deleted).toEqual({ name: created.agentName, status: "deleted" });
    expect((await orka.api("GET", "/api/v1/agents/worker")).status).toBe(200);
    expect((await orka.api("GET", `/api/v1/agents/${created.agentName}`)).status).toBe(404);
    // Only the writer was ever created, and it is gone again.
    expect((await orka.api("GET", "/api/v1/agents")).body.items).toHaveLength(agentsBefore);
  });
});
