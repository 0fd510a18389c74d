import http from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startOrkaWithPeer } from "../helpers/orka-with-peer.ts";
import type { OrkaUnderTest } from "../helpers/orka-server.ts";

const FAKE_CLI = fileURLToPath(new URL("../fixtures/fake-coding-cli.mjs", import.meta.url));
const PROVIDER_KEY = "sk-ant-peer-key-that-must-stay-out-of-the-cli";

// A coding-agent Task end to end through a real server: the claude runtime's command is replaced by the
// scripted stand-in CLI (a real MCP client), which reaches Orka's tools through the session's broker.
describe("coding-agent sessions through a real server", () => {
  let orka: OrkaUnderTest;
  let stop: () => Promise<void>;
  let fixture: http.Server;
  let fixtureURL: string;
  let fixtureHits = 0;

  beforeAll(async () => {
    fixture = http.createServer((_request, response) => {
      fixtureHits++;
      response.setHeader("content-type", "text/plain");
      response.end("fixture page: hello from the local web");
    });
    await new Promise<void>((resolve) => fixture.listen(0, "127.0.0.1", resolve));
    fixtureURL = `http://127.0.0.1:${(fixture.address() as AddressInfo).port}/page`;
    ({ orka, stop } = await startOrkaWithPeer(
      `apiVersion: v1
kind: Secret
metadata: {name: anthropic-key}
stringData: {api-key: ${PROVIDER_KEY}}
---
apiVersion: core.orka.ai/v1alpha1
kind: Provider
metadata: {name: claude-peer}
spec: {type: anthropic, baseURL: "PEER_URL", secretRef: {name: anthropic-key}}
---
apiVersion: core.orka.ai/v1alpha1
kind: Agent
metadata: {name: coder}
spec:
  model: {provider: claude-peer, name: claude-test-model}
  runtime: {type: claude, defaultAllowedTools: [Read, Grep, web_fetch, remember]}
`,
      { ORKA_RUNTIME_COMMAND_CLAUDE: JSON.stringify([process.execPath, FAKE_CLI]), ORKA_ALLOW_LOOPBACK_EGRESS: "true", ORKA_MARKER_OF_THE_SERVER: "server-env-marker" },
    ));
  }, 60_000);
  afterAll(async () => {
    await stop?.();
    await new Promise((resolve) => fixture?.close(resolve));
  });

  async function runTask(name: string, script: Record<string, unknown>, extra: Record<string, unknown> = {}) {
    const created = await orka.api("POST", "/api/v1/tasks", { metadata: { name }, spec: { type: "agent", agentRef: { name: "coder" }, prompt: JSON.stringify(script), ...extra } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    return orka.waitFor(name, ["Succeeded", "Failed"], 60_000);
  }

  const resultOf = async (name: string) => JSON.parse((await orka.api("GET", `/api/v1/tasks/${name}/result`)).body.result ?? "null");

  it("lists exactly the brokered tools and runs web_fetch through the broker, the CLI's answer being the result", async () => {
    const task = await runTask("fetches", { calls: [{ tool: "web_fetch", arguments: { url: fixtureURL } }], print: "done" });
    expect(task.status.phase, task.status.message).toBe("Succeeded");
    const answer = await resultOf("fetches");
    expect(answer.tools.sort()).toEqual(["remember", "web_fetch"]);
    expect(answer.calls[0].error, JSON.stringify(answer.calls[0].error)).toBeUndefined();
    expect(answer.calls[0].result.isError).toBe(false);
    expect(answer.calls[0].result.content[0].text).toContain("fixture page: hello from the local web");
    expect(answer.print).toBe("done");
  });

  it("builds the CLI's environment from nothing: no Provider key, no server variables, a private HOME", async () => {
    const task = await runTask("environment", { env: true });
    expect(task.status.phase, task.status.message).toBe("Succeeded");
    const { env } = await resultOf("environment");
    const text = JSON.stringify(env);
    expect(text).not.toContain(PROVIDER_KEY);
    expect(text).not.toContain("server-env-marker");
    expect(Object.keys(env).filter((name) => name.startsWith("ORKA_") && name !== "ORKA_WORKSPACE")).toEqual([]);
    expect(env.HOME).toMatch(/\/home$/);
    expect(env.HOME).not.toBe(process.env.HOME);
  });
});
