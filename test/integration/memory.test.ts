import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LlmPeer } from "../peers/llm-server.ts";
import type { OrkaUnderTest } from "../helpers/orka-server.ts";
import { startOrkaWithPeer } from "../helpers/orka-with-peer.ts";

const MEMORY_TOOLS = ["recall_memory", "remember", "propose_memory", "search_transcript"];
const toolNames = (body: any): string[] => (body.tools ?? []).map((t: any) => t.function.name);

// The memory tools and their API, against a real server with a scripted model behind the LLM peer.
describe("durable memory", () => {
  let orka: OrkaUnderTest;
  let peer: LlmPeer;
  let reviewerToken: string;
  let userToken: string;

  let stop: () => Promise<void>;

  beforeAll(async () => {
    ({ orka, peer, stop } = await startOrkaWithPeer(`
apiVersion: core.orka.ai/v1alpha1
kind: Agent
metadata: {name: helper}
spec: {providerRef: {name: peer}, systemPrompt: {inline: You help.}, coordination: {enabled: true}}
`));
    reviewerToken = (await orka.api("POST", "/api/v1/auth/tokens", { name: "rita", namespace: "default", role: "reviewer" })).body.token;
    userToken = (await orka.api("POST", "/api/v1/auth/tokens", { name: "ulf", namespace: "default" })).body.token;
  });
  afterAll(() => stop());

  const runTask = async (name: string, model: string, turns: any[], extra: Record<string, unknown> = {}) => {
    peer.script(model, turns);
    const created = await orka.api("POST", "/api/v1/tasks", { name, type: "ai", agentRef: "helper", prompt: `prompt of ${name}`, ai: { model }, ...extra });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    return orka.waitFor(name);
  };
  const requestsFor = (model: string): any[] => peer.requests.filter((r) => r.body.model === model);
  const toolResults = (model: string, turn: number): string[] => (requestsFor(model)[turn].body.messages as any[]).filter((m) => m.role === "tool").map((m) => m.content);
  const memories = async () => (await orka.api("GET", "/api/v1/memories")).body.items as any[];

  it("offers the four memory tools to every ai Task, also with the disable annotation", async () => {
    await runTask("plain", "m-plain", [{ text: "ok" }], { annotations: { "orka.ai/disable-coordination-tool-injection": "true" } });
    expect(toolNames(requestsFor("m-plain")[0].body)).toEqual(MEMORY_TOOLS);
  });

  it("remember creates one pending proposal, redacted, and changes no memory", async () => {
    const before = await memories();
    const task = await runTask("rememberer", "m-remember", [
      { toolCalls: [{ name: "remember", arguments: { content: "Deploys go through staging first.\nThe token is ghp_abcdefghijklmnopqrstuvwxyz0123", tags: ["Ops", "deploy"] } }] },
      { text: "noted" },
    ]);
    expect(task.status.phase).toBe("Succeeded");
    const [result] = toolResults("m-remember", 1);
    const proposal = JSON.parse(result);
    expect(proposal).toMatchObject({ type: "memory", status: "pending", taskName: "rememberer", agentName: "helper", title: "Deploys go through staging first." });
    expect(proposal.content).toBe("Deploys go through staging first.\nThe token is [REDACTED]");
    expect(proposal.description).toBe("Tags: Ops, deploy");
    expect(await memories()).toEqual(before);
  });

  it("takes review and apply from a person only, applies once, and recalls it in a later Task", async () => {
    const [proposal] = (await orka.api("GET", "/api/v1/memory-proposals?status=pending&taskName=rememberer")).body.items;
    expect((await orka.api("POST", `/api/v1/memory-proposals/${proposal.id}/review`, { status: "accepted" }, userToken)).status).toBe(403);
    expect((await orka.api("POST", `/api/v1/memory-proposals/${proposal.id}/review`, { status: "maybe" }, reviewerToken)).body.error.message).toBe(
      "proposal review status must be accepted or rejected",
    );
    expect((await orka.api("POST", `/api/v1/memory-proposals/${proposal.id}/review`, { status: "accepted", reviewNote: "good" }, reviewerToken)).status).toBe(204);
    expect(await memories()).toEqual([]);
    const applied = await orka.api("POST", `/api/v1/memory-proposals/${proposal.id}/apply`, {}, reviewerToken);
    expect(applied.body).toMatchObject({ source: "memory_proposal", sourceProposalId: proposal.id, tags: ["ops", "deploy"], taskName: "rememberer" });
    const again = await orka.api("POST", `/api/v1/memory-proposals/${proposal.id}/apply`, {}, reviewerToken);
    expect(again.body.id).toBe(applied.body.id);
    expect((await orka.api("GET", `/api/v1/memory-proposals/${proposal.id}`)).body).toMatchObject({ status: "applied", appliedMemoryId: applied.body.id, reviewer: "rita", appliedBy: "rita" });

    await runTask("recaller", "m-recall", [{ toolCalls: [{ name: "recall_memory", arguments: { query: "STAGING", tags: "ops" } }] }, { text: "staging first" }]);
    const recalled = JSON.parse(toolResults("m-recall", 1)[0]);
    expect(recalled.map((m: any) => m.id)).toEqual([applied.body.id]);
    const system = requestsFor("m-recall")[0].body.messages[0].content as string;
    expect(system).toContain("## Durable Memory");
    expect(system).toContain("Deploys go through staging first.");
  });

  it("recalls only the Task's own namespace, whatever namespace the model asks for", async () => {
    const created = await orka.api("POST", "/api/v1/memories", { namespace: "team-a", content: "Team A keeps its secrets here", tags: ["elsewhere"] });
    expect(created.status).toBe(201);
    await runTask("cross-recaller", "m-cross", [{ toolCalls: [{ name: "recall_memory", arguments: { namespace: "team-a", query: "Team A" } }] }, { text: "nothing" }]);
    // recall_memory takes no namespace: the model is told it was ignored.
    const [result, note] = toolResults("m-cross", 1)[0].split("\n[");
    expect(note).toBe("ignored arguments this tool does not take: namespace]");
    const recalled = JSON.parse(result) as any[];
    expect(recalled.every((m) => m.namespace === "default")).toBe(true);
    expect(JSON.stringify(recalled)).not.toContain("Team A keeps");
  });

  it("refuses to apply rejected, archived and non-memory proposals, creating nothing", async () => {
    const make = async (body: object) => (await orka.api("POST", "/api/v1/memory-proposals", body)).body.id as string;
    const rejected = await make({ title: "r", type: "memory", content: "x" });
    await orka.api("POST", `/api/v1/memory-proposals/${rejected}/review`, { status: "rejected" }, reviewerToken);
    const archived = await make({ title: "a", type: "memory", content: "y" });
    expect((await orka.api("POST", `/api/v1/memory-proposals/${archived}/archive`, {}, reviewerToken)).status).toBe(204);
    const skill = await make({ title: "s", content: "z" });
    await orka.api("POST", `/api/v1/memory-proposals/${skill}/review`, { status: "accepted" }, reviewerToken);
    const count = (await memories()).length;
    const cases: [string, string][] = [
      [rejected, 'proposal status "rejected" cannot be applied'],
      [archived, 'proposal status "archived" cannot be applied'],
      [skill, 'proposal type "skill" cannot be applied as memory'],
    ];
    for (const [id, message] of cases) {
      expect((await orka.api("POST", `/api/v1/memory-proposals/${id}/apply`, {}, reviewerToken)).body.error).toEqual({ code: 400, message });
    }
    expect(await memories()).toHaveLength(count);
    expect((await orka.api("POST", "/api/v1/memory-proposals/mprop-nope/apply", {}, reviewerToken)).body.error).toEqual({ code: 404, message: "memory proposal not found" });
  });

  it("recalls with filters, clamps the limit, refuses a negative one, and never returns deleted memories", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await orka.api("POST", "/api/v1/memories", { content: `fact number ${i}`, tags: ["Bulk"], agentName: i === 0 ? "special" : undefined })).body.id);
    await orka.api("DELETE", `/api/v1/memories/${ids[1]}`);
    // More than the most a recall may return (200), so the default (50) and the clamp both show.
    for (let i = 0; i < 205; i++) expect((await orka.api("POST", "/api/v1/memories", { content: `numbered note ${i}`, tags: ["many"] })).status).toBe(201);
    await runTask("filters", "m-filters", [
      {
        toolCalls: [
          { name: "recall_memory", arguments: { tags: ["bulk"] } },
          { name: "recall_memory", arguments: { agentName: "special" } },
          { name: "recall_memory", arguments: { limit: -1 } },
          { name: "recall_memory", arguments: { query: "fact number", limit: 1 } },
          { name: "recall_memory", arguments: { tags: "many" } },
          { name: "recall_memory", arguments: { tags: "many", limit: 500 } },
          { name: "recall_memory", arguments: { tags: "many", limit: 3 } },
        ],
      },
      { text: "done" },
    ]);
    const [bulk, special, negative, limited, byDefault, clamped, three] = toolResults("m-filters", 1);
    expect(JSON.parse(bulk).map((m: any) => m.id).sort()).toEqual([ids[0], ids[2]].sort());
    expect(JSON.parse(special).map((m: any) => m.id)).toEqual([ids[0]]);
    expect(negative).toBe("Error executing tool: invalid arguments: limit: limit must be non-negative");
    expect(JSON.parse(limited)).toHaveLength(1);
    expect(JSON.parse(byDefault)).toHaveLength(50);
    expect(JSON.parse(clamped)).toHaveLength(200);
    expect(JSON.parse(three)).toHaveLength(3);
    expect(JSON.parse(clamped).every((m: any) => m.tags.includes("many"))).toBe(true);
  });

  it("propose_memory files a pending proposal of any kind through the tool, and changes no memory", async () => {
    const before = await memories();
    await runTask("proposer", "m-propose", [
      {
        toolCalls: [
          { name: "propose_memory", arguments: { title: "Deploy checklist", skill_name: "deploy", content: "1. staging\n2. production", patch: "+ 3. announce" } },
          { name: "propose_memory", arguments: { title: "No Friday deploys", type: "Policy", description: "Agreed in the retro", agent_name: "planner" } },
          { name: "propose_memory", arguments: { title: "   " } },
        ],
      },
      { text: "proposed" },
    ]);
    const [skill, policy, untitled] = toolResults("m-propose", 1);
    expect(JSON.parse(skill)).toMatchObject({ type: "skill", status: "pending", title: "Deploy checklist", skillName: "deploy", content: "1. staging\n2. production", patch: "+ 3. announce", taskName: "proposer", agentName: "helper", namespace: "default" });
    expect(JSON.parse(policy)).toMatchObject({ type: "policy", status: "pending", description: "Agreed in the retro", agentName: "planner", taskName: "proposer" });
    expect(untitled).toBe("Error executing tool: title is required");
    const filed = (await orka.api("GET", "/api/v1/memory-proposals?taskName=proposer")).body.items as any[];
    expect(filed.map((p) => p.id).sort()).toEqual([JSON.parse(skill).id, JSON.parse(policy).id].sort());
    expect(await memories()).toEqual(before);
  });

  it("injects at most 5 memories within 6000 characters, marking truncation", async () => {
    for (let i = 0; i < 10; i++) await orka.api("POST", "/api/v1/memories", { content: `long memory ${i} ${"z".repeat(1500)}` });
    await runTask("injected", "m-inject", [{ text: "ok" }]);
    const system = requestsFor("m-inject")[0].body.messages[0].content as string;
    const section = system.slice(system.indexOf("## Durable Memory"), system.indexOf("## Memory proposals"));
    expect(section.length).toBeLessThanOrEqual(6000 + 2);
    expect(section).toContain("[durable memory truncated, full content: 1514 chars]");
    expect(section).toContain("[durable memory context truncated]");
    expect((section.match(/^\d+\. \[source=/gm) ?? []).length).toBeLessThanOrEqual(5);
    // The newest first, as the controller read them when it started the attempt.
    expect(section.indexOf("\n1. [source=api")).toBeLessThan(section.indexOf("long memory 9"));
    expect(section.indexOf("long memory 9")).toBeLessThan(section.indexOf("long memory 8"));
    expect(section).not.toContain("long memory 4");
  });

  it("runs the Task without memories, with a warning event, when the memory read fails", async () => {
    // A real failure of the server's store: its memory table is away while the Task starts.
    const db = new Database(join(orka.dataDir, "state", "orka.db"));
    db.pragma("busy_timeout = 10000");
    db.exec("ALTER TABLE memories RENAME TO memories_away");
    let done: any;
    try {
      done = await runTask("forgetful", "m-forgetful", [{ text: "ran anyway" }]);
    } finally {
      db.exec("ALTER TABLE memories_away RENAME TO memories");
      db.close();
    }
    expect(done.status.phase).toBe("Succeeded");
    expect(requestsFor("m-forgetful")[0].body.messages[0].content).not.toContain("## Durable Memory");
    const events = (await orka.api("GET", "/api/v1/tasks/forgetful/events?type=MemoryUnavailable")).body.events as any[];
    expect(events.map((e) => [e.severity, e.summary])).toEqual([["warning", expect.stringMatching(/^durable memory not loaded: .*no such table: memories/)]]);
  });

  it("keeps a session's turns and finds them later, honouring roles and excluding the current session", async () => {
    const first = await runTask("chat-1", "m-chat-1", [{ text: "The blue whale is the largest animal." }], { prompt: "Which animal is the largest?", sessionRef: { name: "zoo", create: true } });
    expect(first.status.message).toBe("task completed successfully");
    // The peer answers turn n of a conversation, n counting assistant turns, so history shifts the script by one.
    await runTask("chat-2", "m-chat-2", [{ text: "(not used)" }, { text: "It weighs about 150 tonnes." }], { prompt: "How heavy is it?", sessionRef: { name: "zoo" } });
    // The second turn saw the first as history.
    expect(requestsFor("m-chat-2")[0].body.messages.slice(1)).toEqual([
      { role: "user", content: "Which animal is the largest?" },
      { role: "assistant", content: "The blue whale is the largest animal." },
      { role: "user", content: "How heavy is it?" },
    ]);
    expect((await orka.api("GET", "/api/v1/tasks/chat-2")).body.status).toMatchObject({ phase: "Succeeded" });

    await runTask("searcher", "m-search", [
      {
        toolCalls: [
          { name: "search_transcript", arguments: { query: '"blue whale" largest' } },
          { name: "search_transcript", arguments: { query: "whale", roles: "user" } },
          { name: "search_transcript", arguments: { query: "whale", exclude_session_name: "zoo" } },
          { name: "search_transcript", arguments: { query: "largest", max_snippet_length: 10 } },
        ],
      },
      { text: "found" },
    ], { sessionRef: { name: "research", create: true } });
    const [phrase, usersOnly, excluded, short] = toolResults("m-search", 1).map((r) => JSON.parse(r));
    expect(phrase).toEqual([expect.objectContaining({ sessionName: "zoo", role: "assistant", snippet: "The blue whale is the largest animal." })]);
    expect(usersOnly).toEqual([]);
    expect(excluded.every((r: any) => r.sessionName !== "zoo")).toBe(true);
    expect(short.map((r: any) => r.snippet)).toEqual(["…he largest…", "…he largest…"]);

    const missing = await runTask("no-session", "m-none", [{ text: "x" }], { sessionRef: { name: "ghost" } });
    expect(missing.status.message).toBe('session "ghost" not found (set sessionRef.create: true to start it)');
    expect((await orka.cli(["session", "list"])).stdout).toMatch(/zoo\s+4/);
  });

  it("lists and reviews proposals through the CLI", async () => {
    const id = (await orka.api("POST", "/api/v1/memory-proposals", { title: "CLI fact", type: "memory", content: "The CLI can review." })).body.id;
    expect((await orka.cli(["memory", "proposal", "list", "--status", "pending"])).stdout).toContain(id);
    expect((await orka.cli(["memory", "proposal", "review", id, "--status", "accepted"])).stdout.trim()).toBe(`proposal/${id} accepted`);
    expect((await orka.cli(["memory", "proposal", "apply", id])).stdout).toMatch(new RegExp(`^proposal/${id} applied as memory/mem-`));
    expect((await orka.cli(["memory", "list", "-q", "CLI can"])).stdout).toContain("The CLI can review.");
  });
});
