import { describe, expect, it } from "vitest";
import { childRefusal, type ChildRequest } from "../../src/controller/child-rules.ts";
import type { Agent } from "../../src/controller/resolve.ts";
import { COORDINATION_DEFAULTS, type Coordination } from "../../src/resources/agent.ts";
import { ANNOTATION, API_VERSION, LABEL } from "../../src/resources/meta.ts";

const agent = (name: string, spec: Agent["spec"] = {}, metadata: Partial<Agent["metadata"]> = {}): Agent => ({
  apiVersion: API_VERSION,
  kind: "Agent",
  metadata: { name, namespace: "default", ...metadata },
  spec,
});
const coordinator = (coordination: Partial<Coordination>) => agent("boss", { coordination: { ...COORDINATION_DEFAULTS, enabled: true, ...coordination } });
// As written to the store directly, without the schema's defaults.
const storedWithoutDefaults = agent("boss", { coordination: { enabled: true, allowedAgents: [{ name: "helper" }] } as Coordination });
const helper = agent("helper");
const madeByBoss = agent("boss-run-writer-abc123", {}, { labels: { [LABEL.createdBy]: "create_agent" }, annotations: { [ANNOTATION.parentTaskName]: "boss-run" } });
const request = (overrides: Partial<ChildRequest>): ChildRequest => ({
  parentName: "boss-run",
  parentAgent: coordinator({ allowedAgents: [{ name: "helper" }] }),
  depth: 1,
  namespace: "default",
  agentRef: { name: "helper", namespace: "default" },
  agent: helper,
  ...overrides,
});

// The one rule delegate_task and admission both apply to a coordinator's child.
describe("a coordinator's child", () => {
  it.each<[string, Partial<ChildRequest>, ReturnType<typeof childRefusal>]>([
    ["an Agent on allowedAgents, within maxDepth", {}, undefined],
    ["a parent without an Agent", { parentAgent: undefined }, { rule: "coordination" }],
    ["a parent whose Agent does not coordinate", { parentAgent: coordinator({ enabled: false }) }, { rule: "coordination" }],
    ["deeper than the default maxDepth of 3", { parentAgent: storedWithoutDefaults, depth: 4 }, { rule: "depth", maxDepth: 3 }],
    ["deeper than maxDepth", { parentAgent: coordinator({ maxDepth: 1, allowedAgents: [{ name: "helper" }] }), depth: 2 }, { rule: "depth", maxDepth: 1 }],
    ["an Agent not on allowedAgents", { agentRef: { name: "stranger", namespace: "default" }, agent: agent("stranger") }, { rule: "agent" }],
    ["a listed name in another namespace than the entry stands for", { agentRef: { name: "helper", namespace: "team-b" } }, { rule: "agent" }],
    ["a listed name with its namespace", { parentAgent: coordinator({ allowedAgents: [{ name: "helper", namespace: "team-b" }] }), agentRef: { name: "helper", namespace: "team-b" } }, undefined],
    ["without allowedAgents, an Agent this parent made with create_agent", { parentAgent: coordinator({}), agentRef: { name: madeByBoss.metadata.name, namespace: "default" }, agent: madeByBoss }, undefined],
    ["without allowedAgents, an Agent another Task made", { parentAgent: coordinator({}), parentName: "other-run", agent: madeByBoss }, { rule: "agent" }],
    ["without allowedAgents, any other Agent", { parentAgent: coordinator({}) }, { rule: "agent" }],
    ["without allowedAgents, an Agent that does not exist", { parentAgent: coordinator({}), agent: undefined }, { rule: "agent" }],
  ])("%s", (_label, overrides, expected) => {
    expect(childRefusal(request(overrides))).toEqual(expected);
  });
});
