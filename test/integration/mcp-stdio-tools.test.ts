import { randomUUID } from "node:crypto";
import { readFileSync, realpathSync } from "node:fs";
import { dirname } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { toolResultsOf } from "../peers/llm-server.ts";
import { probedTool, startOrkaWithPeer } from "../helpers/orka-with-peer.ts";
import { processesMatching } from "../helpers/orka-server.ts";

/** The checkout whose node_modules holds the reference server and the SDK: the operator's servers directory here. */
const SERVERS_DIR = dirname(realpathSync("node_modules"));
const FIXTURE = readFileSync("test/fixtures/mcp-stdio-server.mjs", "utf8");
/** On each server's command line (the servers ignore it), with its Tool's name, so the test finds each process they started. */
const MARKER = `orka-stdio-it-${randomUUID()}`;
const markerOf = (tool: string) => `${MARKER}-${tool}`;

/**
 * Waits (at most 5 s) until no process of the Tool's server is left. A probe may be running when the
 * check starts (the status the first probe writes wakes a second one); a process left behind stays.
 */
async function noServerLeft(tool: string): Promise<number[]> {
  let left = processesMatching(markerOf(tool));
  for (let i = 0; i < 50 && left.length > 0; i++) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    left = processesMatching(markerOf(tool));
  }
  return left;
}
const PROVIDER_KEY = "sk-peer-0000000000000000000";

describe("MCP Tools over stdio, through a real Orka server", () => {
  let setup: Awaited<ReturnType<typeof startOrkaWithPeer>>;

  const probed = (name: string) => probedTool(setup.orka, name);
  const createTool = (name: string, mcp: Record<string, unknown>) => setup.orka.api("POST", "/api/v1/tools", { metadata: { name }, spec: { description: "MCP server over stdio", mcp } });
  async function runTask(name: string, tools: string[], calls: { name: string; arguments: Record<string, unknown> }[]) {
    const { orka, peer } = setup;
    const model = `m-${name}`;
    peer.script(model, [{ toolCalls: calls }, { text: "done" }]);
    const created = await orka.api("POST", "/api/v1/tasks", { name, type: "ai", prompt: "use the tools", ai: { providerRef: { name: "peer" }, model, tools } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const task = await orka.waitFor(name, undefined, 30_000);
    const requests = peer.requests.filter((r) => r.body.model === model);
    const offered = ((requests[0]?.body.tools ?? []) as { function?: { name: string }; name?: string }[]).map((t) => t.function?.name ?? t.name);
    return { task, offered, results: requests[1] ? toolResultsOf(requests[1].body) : [] };
  }

  beforeAll(async () => {
    setup = await startOrkaWithPeer("", { ORKA_MCP_SERVERS_DIR: SERVERS_DIR });
    for (const [name, mcp] of Object.entries({
      everything: { command: ["mcp-server-everything", "stdio", markerOf("everything")], env: { GREETING: "from the Tool" } },
      slow: { command: ["mcp-server-everything", "stdio", markerOf("slow")], tools: ["trigger-long-running-operation"], timeout: "2s" },
      fixture: { command: ["node", "--input-type=module", "-e", FIXTURE, markerOf("fixture")] },
      // The key it prints is put together at run time, so only its stderr holds it whole.
      exits: { command: ["node", "-e", "console.error('cannot start: no config, key sk-' + 'b'.repeat(24)); process.exit(2)", markerOf("exits")] },
    })) {
      const created = await createTool(name, mcp);
      expect(created.status, JSON.stringify(created.body)).toBe(201);
    }
  }, 30_000);
  afterAll(async () => {
    await setup?.stop();
  });

  it("the probe starts the server in the sandbox and lists its tools; the probe's process is gone after", async () => {
    const status = await probed("everything");
    expect(status.available).toBe(true);
    expect(status.endpoint).toBeUndefined();
    expect(status.mcpTools.find((t: { name: string }) => t.name === "echo").inputSchema.properties.message.type).toBe("string");
    expect(await noServerLeft("everything")).toEqual([]);
  }, 20_000);

  it("a Task is offered the server's tools and calls them, each call on a process of its own that ends with it", async () => {
    await probed("everything");
    const { task, offered, results } = await runTask("calls-stdio", ["everything"], [
      { name: "everything_echo", arguments: { message: "hello stdio" } },
      { name: "everything_get-sum", arguments: { a: 2, b: 40 } },
    ]);
    expect(task.status.phase).toBe("Succeeded");
    expect(offered).toEqual(expect.arrayContaining(["everything_echo", "everything_get-sum"]));
    expect(results).toEqual(["Echo: hello stdio", "The sum of 2 and 40 is 42."]);
    expect(await noServerLeft("everything")).toEqual([]);
  }, 40_000);

  it("the server's environment holds the Tool's env and nothing of Orka's: no ORKA_ variable, no Provider key, no admin token", async () => {
    await probed("everything");
    const { results } = await runTask("env-stdio", ["everything"], [{ name: "everything_get-env", arguments: {} }]);
    const env = JSON.parse(results[0]);
    expect(env.GREETING).toBe("from the Tool");
    expect(Object.keys(env).filter((name) => name.toUpperCase().startsWith("ORKA"))).toEqual([]);
    expect(results[0]).not.toContain(PROVIDER_KEY);
    expect(results[0]).not.toContain(setup.orka.token);
    expect(results[0]).not.toContain(setup.orka.dataDir);
  }, 40_000);

  it("the server cannot read Orka's data directory: it is outside the sandbox's binds", async () => {
    await probed("fixture");
    const { task, results } = await runTask("reads-stdio", ["fixture"], [
      { name: "fixture_read", arguments: { path: "/mcp-servers/package.json" } },
      { name: "fixture_read", arguments: { path: `${setup.orka.dataDir}/cli-config.yaml` } },
    ]);
    expect(task.status.phase).toBe("Succeeded");
    expect(JSON.parse(results[0]).name).toBeTruthy();
    expect(results[1]).toMatch(/^Error executing tool: .*ENOENT/);
    expect(results[1]).not.toContain(setup.orka.token);
  }, 40_000);

  it("a call that outlasts the Tool's timeout gives the model an error within it, and the server is killed", async () => {
    await probed("slow");
    const started = Date.now();
    const { task, results } = await runTask("slow-stdio", ["slow"], [{ name: "slow_trigger-long-running-operation", arguments: { duration: 60, steps: 2 } }]);
    expect(task.status.phase).toBe("Succeeded");
    expect(results[0]).toContain("did not answer within 2000 ms");
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(await noServerLeft("slow")).toEqual([]);
  }, 40_000);

  it("a server that dies during a call gives the model its exit and stderr, and the Task goes on", async () => {
    await probed("fixture");
    const { task, results } = await runTask("crash-stdio", ["fixture"], [{ name: "fixture_crash", arguments: { why: "testing" } }]);
    expect(task.status.phase).toBe("Succeeded");
    expect(results[0]).toMatch(/^Error executing tool: MCP server `node --input-type=module -e .*`: the server exited \(exit code 7\) before it answered; its stderr ends: crashing: testing$/s);
  }, 40_000);

  it("a server that exits at once makes the Tool unavailable, with the reason from its stderr (scrubbed); none of its tools are offered", async () => {
    const status = await probed("exits");
    expect(status.available).toBe(false);
    expect(status.error).toContain("the server exited (exit code 2) before it answered; its stderr ends: cannot start: no config, key [REDACTED]");
    expect(status.error).not.toContain("b".repeat(24));
    const { offered, results } = await runTask("exits-stdio", ["exits"], [{ name: "exits_echo", arguments: {} }]);
    expect(offered.filter((name) => name?.startsWith("exits_"))).toEqual([]);
    expect(results[0]).toContain("not enabled");
  }, 40_000);

  it("refuses stdio fields that do not fit, saying how to fix them, and creates nothing", async () => {
    const refusals: [Record<string, unknown>, string][] = [
      [{ url: "http://127.0.0.1:1", command: ["mcp-server-everything"] }, "spec.mcp.url: an MCP Tool needs exactly one of url (a Streamable HTTP server) and command (a stdio server run in the sandbox)"],
      [{ tools: ["echo"] }, "spec.mcp.url: an MCP Tool needs exactly one of url"],
      [{ command: [] }, `spec.mcp.command: name the server's executable first, e.g. ["mcp-server-everything", "stdio"]`],
      [{ command: "mcp-server-everything stdio" }, "spec.mcp.command: must be a list: the executable, then its arguments"],
      [{ command: ["mcp-server-everything"], env: { ORKA_TOKEN: "x" } }, "names starting with ORKA_ are Orka's own; rename the variable"],
      [{ command: ["mcp-server-everything"], env: { orka_token: "x" } }, "names starting with ORKA_ are Orka's own"],
      [{ command: ["mcp-server-everything"], env: { "BAD-NAME": "x" } }, "an environment variable name is letters, digits and _"],
      [{ url: "http://127.0.0.1:1", env: { A: "x" } }, "spec.mcp.env: env is for a server started from command"],
      [{ command: ["mcp-server-everything"], shell: true }, "shell"],
    ];
    for (const [mcp, message] of refusals) {
      const refused = await createTool("refused", mcp);
      expect(refused.status, JSON.stringify(mcp)).toBe(400);
      expect(refused.body.error.message).toContain(message);
    }
    expect((await setup.orka.api("GET", "/api/v1/tools/refused?namespace=default")).status).toBe(404);
  });
});
