import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startOrkaServer, type OrkaUnderTest } from "../helpers/orka-server.ts";

// Resources (create, validate, list, delete), through the CLI and HTTP of a real `orka serve`.
describe("resources applied and read back through the CLI and HTTP", () => {
  let orka: OrkaUnderTest;
  beforeAll(async () => (orka = await startOrkaServer()));
  afterAll(() => orka.stop());

  it("applies a multi-document YAML and reads the objects back with defaults filled", async () => {
    const yaml = `
apiVersion: v1
kind: Secret
metadata: {name: llm-key}
stringData: {api-key: sk-test-value-1234567890}
---
apiVersion: core.orka.ai/v1alpha1
kind: Provider
metadata: {name: openai}
spec: {type: openai, secretRef: {name: llm-key}}
---
apiVersion: core.orka.ai/v1alpha1
kind: Agent
metadata: {name: helper}
spec:
  providerRef: {name: openai}
  tools: [{name: web_search}]
  coordination: {enabled: true}
---
apiVersion: core.orka.ai/v1alpha1
kind: Task
metadata: {name: defaults-task}
spec: {type: container, command: ["true"]}
`;
    const applied = await orka.cli(["apply", "-f", "-"], yaml);
    expect(applied.stderr).toBe("");
    expect(applied.stdout.trim().split("\n")).toEqual(["secret/llm-key created", "provider/openai created", "agent/helper created", "task/defaults-task created"]);

    const agent = (await orka.api("GET", "/api/v1/agents/helper")).body;
    expect(agent.spec.tools).toEqual([{ name: "web_search", enabled: true }]);
    expect(agent.spec.coordination).toMatchObject({ maxDepth: 3, maxConcurrentChildren: 5, autonomous: false, maxIterations: 0 });
    const task = (await orka.api("GET", "/api/v1/tasks/defaults-task")).body;
    expect(task.spec.priority).toBe(500);
    expect(task.metadata.uid).toBeTruthy();
    const provider = await orka.cli(["get", "provider", "openai", "-o", "json"]);
    expect(JSON.parse(provider.stdout).status).toMatchObject({ ready: true });
  });

  it("shows a Provider whose Secret lacks the key as not ready, with the exact message", async () => {
    await orka.api("POST", "/api/v1/secrets", { name: "no-key", stringData: { other: "x" } });
    await orka.api("POST", "/api/v1/providers", { metadata: { name: "broken" }, spec: { type: "anthropic", secretRef: { name: "no-key" } } });
    await orka.api("POST", "/api/v1/providers", { metadata: { name: "missing" }, spec: { type: "anthropic", secretRef: { name: "nope" } } });
    await orka.api("POST", "/api/v1/providers", { metadata: { name: "azure" }, spec: { type: "azure-openai" } });
    const status = async (name: string) => {
      for (let i = 0; i < 50; i++) {
        const { body } = await orka.api("GET", `/api/v1/providers/${name}`);
        if (body.status?.ready !== undefined) return body.status;
        await new Promise((r) => setTimeout(r, 50));
      }
    };
    expect(await status("broken")).toMatchObject({ ready: false, message: "key 'api-key' not found in secret" });
    expect(await status("missing")).toMatchObject({ ready: false, message: "referenced secret not found: nope" });
    expect(await status("azure")).toMatchObject({ ready: false, message: "azure.deploymentName is required for azure-openai provider" });

    // Adding the key makes it ready: the controller watches Secrets too.
    await orka.api("PUT", "/api/v1/secrets/no-key", { stringData: { "api-key": "sk-added" } });
    for (let i = 0; i < 50 && !(await orka.api("GET", "/api/v1/providers/broken")).body.status?.ready; i++) await new Promise((r) => setTimeout(r, 50));
    expect((await orka.api("GET", "/api/v1/providers/broken")).body.status.ready).toBe(true);
  });

  it("refuses to change a Task's spec.type and leaves it unchanged", async () => {
    await orka.api("POST", "/api/v1/tasks", { name: "typed", type: "container", command: ["true"] });
    const refused = await orka.api("PUT", "/api/v1/tasks/typed", { type: "ai", prompt: "x" });
    expect(refused).toMatchObject({ status: 400, body: { error: { code: 400, message: "spec.type is immutable" } } });
    expect((await orka.api("GET", "/api/v1/tasks/typed")).body.spec.type).toBe("container");
  });

  it("refuses a Tool with neither http nor mcp, saying which field", async () => {
    const refused = await orka.api("POST", "/api/v1/tools", { metadata: { name: "empty" }, spec: { description: "nothing" } });
    expect(refused.status).toBe(400);
    expect(refused.body.error.message).toBe("spec.http: a Tool needs exactly one of http and mcp");
    expect((await orka.api("GET", "/api/v1/tools/empty")).status).toBe(404);
    const cli = await orka.cli(["apply", "-f", "-"], "apiVersion: core.orka.ai/v1alpha1\nkind: Tool\nmetadata: {name: empty}\nspec: {description: x}\n");
    expect(cli.code).not.toBe(0);
    expect(cli.stderr).toContain("document 1: spec.http: a Tool needs exactly one of http and mcp");
  });

  it("never returns Secret values", async () => {
    const list = await orka.api("GET", "/api/v1/secrets");
    expect(JSON.stringify(list.body)).not.toContain("sk-test-value");
    expect(list.body.items.find((s: any) => s.name === "llm-key")).toMatchObject({ keys: ["api-key"], type: "Opaque" });
  });
});
