import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startOrkaWithPeer } from "../helpers/orka-with-peer.ts";
import type { OrkaUnderTest } from "../helpers/orka-server.ts";
import type { LlmPeer } from "../peers/llm-server.ts";

const TEAM_B_KEY = "sk-team-b-0000000000000000000000";
const TEAM_B = `
apiVersion: v1
kind: Secret
metadata: {name: b-key, namespace: team-b}
stringData: {api-key: ${TEAM_B_KEY}}
---
apiVersion: core.orka.ai/v1alpha1
kind: Provider
metadata: {name: b-provider, namespace: team-b}
spec: {type: openai, baseURL: "PEER_URL/v1", secretRef: {name: b-key}}
---
apiVersion: core.orka.ai/v1alpha1
kind: Agent
metadata: {name: b-agent, namespace: team-b}
spec: {providerRef: {name: b-provider}, model: {name: m-b}, systemPrompt: {inline: "team-b private instructions"}}
`;

// References into another namespace need a caller that may read it, even without ORKA_ENFORCE_NAMESPACE_ISOLATION.
describe("cross-namespace references by default", () => {
  let orka: OrkaUnderTest;
  let peer: LlmPeer;
  let stop: () => Promise<void>;
  let teamA = "";

  beforeAll(async () => {
    ({ orka, peer, stop } = await startOrkaWithPeer(TEAM_B));
    teamA = (await orka.api("POST", "/api/v1/auth/tokens", { name: "team-a-user", namespace: "team-a", role: "user" })).body.token;
  });
  afterAll(async () => {
    await stop();
  });

  const sentTeamBKey = () => peer.requests.some((r) => JSON.stringify(r.headers).includes(TEAM_B_KEY));

  it("refuses a team-a user's Task naming team-b's Provider or Agent, creates nothing and never sends team-b's key", async () => {
    expect((await orka.api("GET", "/api/v1/providers/b-provider?namespace=team-b", undefined, teamA)).status).toBe(403);
    peer.script("m-a", [{ text: "answered with team-b's key" }]);
    const viaProvider = await orka.api("POST", "/api/v1/tasks", { name: "borrow-provider", namespace: "team-a", type: "ai", prompt: "hi", ai: { providerRef: { name: "b-provider", namespace: "team-b" }, model: "m-a" } }, teamA);
    expect([viaProvider.status, viaProvider.body.error.message]).toEqual([
      403,
      'ai.providerRef refers to namespace "team-b", which this caller cannot read: refer to an object in namespace "team-a"',
    ]);
    peer.script("m-b", [{ text: "answered with team-b's prompt" }]);
    const viaAgent = await orka.api("POST", "/api/v1/tasks", { name: "borrow-agent", namespace: "team-a", type: "ai", prompt: "hi", agentRef: { name: "b-agent", namespace: "team-b" } }, teamA);
    expect([viaAgent.status, viaAgent.body.error.message]).toEqual([
      403,
      'agentRef refers to namespace "team-b", which this caller cannot read: refer to an object in namespace "team-a"',
    ]);
    const yamlAgent = await orka.api("POST", "/api/v1/agents", { metadata: { name: "a-agent", namespace: "team-a" }, spec: { providerRef: { name: "b-provider", namespace: "team-b" } } }, teamA);
    expect([yamlAgent.status, yamlAgent.body.error.message]).toEqual([
      403,
      'spec.providerRef refers to namespace "team-b", which this caller cannot read: refer to an object in namespace "team-a"',
    ]);

    for (const path of ["/api/v1/tasks/borrow-provider", "/api/v1/tasks/borrow-agent", "/api/v1/agents/a-agent"]) {
      expect((await orka.api("GET", `${path}?namespace=team-a`)).status, path).toBe(404);
    }
    await new Promise((r) => setTimeout(r, 500));
    expect(sentTeamBKey()).toBe(false);
    expect(JSON.stringify(peer.requests.map((r) => r.body))).not.toContain("team-b private instructions");
  });

  it("checks references as they resolve: a team-a Agent an admin pointed at team-b's Provider, on create, PUT and fork", async () => {
    const bridge = { metadata: { name: "a-bridge", namespace: "team-a" }, spec: { providerRef: { name: "b-provider", namespace: "team-b" }, model: { name: "m-bridge" } } };
    expect((await orka.api("POST", "/api/v1/agents", bridge)).status).toBe(201);
    const refused = 'the providerRef of agent "a-bridge" refers to namespace "team-b", which this caller cannot read: refer to an object in namespace "team-a"';
    const keyRequests = () => peer.requests.filter((r) => JSON.stringify(r.headers).includes(TEAM_B_KEY)).length;

    const viaBridge = await orka.api("POST", "/api/v1/tasks", { name: "via-bridge", namespace: "team-a", type: "ai", prompt: "hi", agentRef: "a-bridge" }, teamA);
    expect([viaBridge.status, viaBridge.body.error?.message]).toEqual([403, refused]);
    expect((await orka.api("GET", "/api/v1/tasks/via-bridge?namespace=team-a")).status).toBe(404);

    // A Task of the user's own, then pointed at the bridge by a PUT that names no other namespace.
    const own = { name: "own-task", namespace: "team-a", type: "ai", prompt: "hi", agentRef: "a-own-missing" };
    expect((await orka.api("POST", "/api/v1/tasks", own, teamA)).status).toBe(201);
    const current = (await orka.api("GET", "/api/v1/tasks/own-task?namespace=team-a", undefined, teamA)).body;
    const put = await orka.api("PUT", "/api/v1/tasks/own-task", { namespace: "team-a", metadata: { resourceVersion: current.metadata.resourceVersion }, spec: { ...current.spec, requestedBy: undefined, agentRef: { name: "a-bridge" } } }, teamA);
    expect([put.status, put.body.error?.message]).toEqual([403, refused]);
    expect((await orka.api("GET", "/api/v1/tasks/own-task?namespace=team-a")).body.spec.agentRef).toEqual({ name: "a-own-missing" });

    // The admin may run the bridge; a fork copies its spec, so the team-a user may not fork it.
    peer.script("m-bridge", [{ text: "bridged answer" }]);
    expect((await orka.api("POST", "/api/v1/tasks", { name: "bridged", namespace: "team-a", type: "ai", prompt: "hi", agentRef: "a-bridge" })).status).toBe(201);
    expect((await orka.waitFor("bridged", ["Succeeded", "Failed"], 30_000, "team-a")).status.phase).toBe("Succeeded");
    const sentBefore = keyRequests();
    const fork = await orka.api("POST", "/api/v1/tasks/bridged/fork?namespace=team-a", { at: 1, name: "bridged-fork" }, teamA);
    expect([fork.status, fork.body.error?.message]).toEqual([403, refused]);
    expect((await orka.api("GET", "/api/v1/tasks/bridged-fork?namespace=team-a")).status).toBe(404);
    await new Promise((r) => setTimeout(r, 500));
    expect(keyRequests()).toBe(sentBefore);
  });

  it("refuses a flat Agent body (name beside spec) and an Agent PUT that refer into team-b", async () => {
    const flat = await orka.api("POST", "/api/v1/agents", { name: "a-flat", namespace: "team-a", spec: { providerRef: { name: "b-provider", namespace: "team-b" } } }, teamA);
    expect([flat.status, flat.body.error?.message]).toEqual([
      403,
      'spec.providerRef refers to namespace "team-b", which this caller cannot read: refer to an object in namespace "team-a"',
    ]);
    expect((await orka.api("GET", "/api/v1/agents/a-flat?namespace=team-a")).status).toBe(404);
    const mine = { name: "a-mine", namespace: "team-a", spec: { providerRef: { name: "a-provider" } } };
    expect((await orka.api("POST", "/api/v1/agents", mine, teamA)).status).toBe(201);
    const put = await orka.api("PUT", "/api/v1/agents/a-mine", { ...mine, spec: { providerRef: { name: "b-provider", namespace: "team-b" } } }, teamA);
    expect(put.status).toBe(403);
    expect((await orka.api("GET", "/api/v1/agents/a-mine?namespace=team-a")).body.spec.providerRef).toEqual({ name: "a-provider" });
  });

  it("still lets a caller refer to its own namespace, and an admin (who reads every namespace) refer across", async () => {
    const own = await orka.api("POST", "/api/v1/agents", { metadata: { name: "a-own", namespace: "team-a" }, spec: { providerRef: { name: "peer", namespace: "team-a" } } }, teamA);
    expect(own.status).toBe(201);
    const admin = await orka.api("POST", "/api/v1/agents", { metadata: { name: "a-admin", namespace: "team-a" }, spec: { providerRef: { name: "b-provider", namespace: "team-b" } } });
    expect(admin.status).toBe(201);
  });
});
