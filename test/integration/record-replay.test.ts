import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import type { OrkaUnderTest } from "../helpers/orka-server.ts";
import { startOrkaWithPeer } from "../helpers/orka-with-peer.ts";
import type { LlmPeer } from "../peers/llm-server.ts";

// Record / replay / fork: a run becomes a replay Provider that plays it back offline, bit for bit,
// and a new Task can continue a run from any journalled step, with another model.
describe("record, replay and fork", () => {
  let orka: OrkaUnderTest;
  let peer: LlmPeer;
  let stop: () => Promise<void>;
  const PROMPT = "Write A to a.txt, read it back, and report.";

  beforeAll(async () => {
    ({ orka, peer, stop } = await startOrkaWithPeer(`
apiVersion: core.orka.ai/v1alpha1
kind: Agent
metadata: {name: writer}
spec:
  providerRef: {name: peer}
  model: {name: m-rec}
  systemPrompt: {inline: You keep notes in files.}
  tools: [{name: file_write}, {name: file_read}]
`));
    peer.script("m-rec", [
      { toolCalls: [{ name: "file_write", arguments: { path: "a.txt", content: "A" } }] },
      { toolCalls: [{ name: "file_read", arguments: { path: "a.txt" } }] },
      { text: "I wrote A to a.txt and read it back." },
    ]);
    expect((await orka.api("POST", "/api/v1/tasks", { name: "rec", type: "ai", agentRef: "writer", prompt: PROMPT })).status).toBe(201);
    expect((await orka.waitFor("rec")).status.phase).toBe("Succeeded");
  });
  afterAll(() => stop());

  it("exports a run as a replay Provider that plays it back offline, and refuses a run that diverges", async () => {
    const exported = await orka.cli(["task", "export", "rec"]);
    expect(exported.code, exported.stderr).toBe(0);
    const provider = parse(exported.stdout);
    expect(provider).toMatchObject({ kind: "Provider", metadata: { name: "rec-replay" }, spec: { type: "replay", replay: { strict: true, source: { task: "rec", run: 1 } } } });
    expect(provider.spec.replay.turns).toHaveLength(3);
    expect((await orka.cli(["apply", "-f", "-"], exported.stdout)).code).toBe(0);

    const before = peer.requests.length;
    const replayTask = { type: "ai", agentRef: "writer", prompt: PROMPT, ai: { providerRef: { name: "rec-replay" } } };
    expect((await orka.api("POST", "/api/v1/tasks", { name: "replayed", ...replayTask })).status).toBe(201);
    const replayed = await orka.waitFor("replayed");
    expect(replayed.status.phase, replayed.status.message).toBe("Succeeded");
    expect((await orka.api("GET", "/api/v1/tasks/replayed/result")).body.result).toBe((await orka.api("GET", "/api/v1/tasks/rec/result")).body.result);
    const calls = (t: string) => orka.api("GET", `/api/v1/tasks/${t}/events?type=ToolCallCompleted`).then((r) => r.body.events.map((e: any) => [e.toolCallID, e.toolName, e.content]));
    expect(await calls("replayed")).toEqual(await calls("rec"));
    expect(peer.requests.length).toBe(before);

    expect((await orka.api("POST", "/api/v1/tasks", { name: "diverged", ...replayTask, prompt: "Something else entirely." })).status).toBe(201);
    const diverged = await orka.waitFor("diverged");
    expect(diverged.status.phase).toBe("Failed");
    expect(diverged.status.message).toContain("replay diverged at turn 1");
    expect(peer.requests.length).toBe(before);
  });

  it("forks a run at a step and continues it with another model, without asking for the earlier turns again", async () => {
    peer.script("m-fork", [{ text: "never asked: the first turn comes from the journal" }, { text: "Forked after the write." }]);
    const forked = await orka.cli(["task", "fork", "rec", "--at", "3", "--model", "m-fork", "--name", "forked"]);
    expect(forked.stdout.trim()).toBe("task/forked created from rec at step 3");
    const done = await orka.waitFor("forked");
    expect(done.status.phase).toBe("Succeeded");
    expect(done.metadata.annotations["orka.ai/forked-from"]).toMatch(/^rec\/[^/]+\/1\/3$/);
    expect((await orka.api("GET", "/api/v1/tasks/forked/result")).body.result).toBe("Forked after the write.");
    const requests = peer.requests.filter((r) => r.body.model === "m-fork");
    expect(requests).toHaveLength(1);
    const messages = requests[0].body.messages as any[];
    expect(messages.map((m) => m.role)).toEqual(["system", "user", "assistant", "tool"]);
    expect(messages[1].content).toBe(PROMPT);

    const tooFar = await orka.api("POST", "/api/v1/tasks/rec/fork", { at: 99 });
    expect([tooFar.status, tooFar.body.error.message]).toEqual([400, "run 1 of rec has 6 steps; at must be between 1 and 6"]);
    const noRun = await orka.api("POST", "/api/v1/tasks/rec/fork", { at: 0 });
    expect(noRun.status).toBe(400);
  });
});
