import { spawn, type ChildProcess } from "node:child_process";
import http from "node:http";
import net from "node:net";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { z } from "zod";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { toolResultsOf } from "../peers/llm-server.ts";
import { probedTool, startOrkaWithPeer } from "../helpers/orka-with-peer.ts";
import { callMcpTool } from "../../src/tools/custom/mcp-tool.ts";

const SERVER_BIN = "node_modules/.bin/mcp-server-everything";

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** The reference MCP server over Streamable HTTP on a free loopback port; resolves once it listens (at most 15 s). */
async function startEverything(): Promise<{ port: number; child: ChildProcess }> {
  const port = await freePort();
  const child = spawn(SERVER_BIN, ["streamableHttp"], { env: { ...process.env, PORT: String(port) }, stdio: ["ignore", "ignore", "pipe"] });
  const started = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("mcp-server-everything did not start within 15 s")), 15_000);
    let seen = "";
    child.stderr!.on("data", (chunk: Buffer) => {
      seen = (seen + chunk.toString()).slice(-4096);
      if (seen.includes("listening on port")) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.on("exit", (code) => reject(new Error(`mcp-server-everything exited with ${code}: ${seen}`)));
  });
  await started.catch((err: unknown) => {
    stop(child);
    throw err;
  });
  return { port, child };
}

/** A small MCP server (the SDK's own, stateless) whose one tool drops the connection instead of answering. */
async function startDyingServer() {
  const state = { crashes: 0 };
  const server = http.createServer(async (req, res) => {
    const mcp = new McpServer({ name: "dying", version: "1" });
    mcp.registerTool("crash", { description: "Drops the connection", inputSchema: { why: z.string() } }, async () => {
      state.crashes++;
      req.socket.destroy();
      return { content: [] };
    });
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on("close", () => void mcp.close());
    await mcp.connect(transport);
    await transport.handleRequest(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    server,
    port: (server.address() as net.AddressInfo).port,
    get crashes() {
      return state.crashes;
    },
  };
}

function stop(child: ChildProcess | undefined): void {
  if (child?.pid && child.exitCode === null) process.kill(child.pid);
}

describe("MCP Tools over Streamable HTTP, against the reference MCP server", () => {
  let everything: { port: number; child: ChildProcess };
  let setup: Awaited<ReturnType<typeof startOrkaWithPeer>>;
  let downPort = 0;
  let dying: Awaited<ReturnType<typeof startDyingServer>>;

  const probed = (name: string) => probedTool(setup.orka, name);
  async function createTool(name: string, mcp: Record<string, unknown>) {
    const created = await setup.orka.api("POST", "/api/v1/tools", { metadata: { name }, spec: { description: "MCP server", mcp } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
  }
  async function runTask(name: string, tools: string[], calls: { name: string; arguments: Record<string, unknown> }[]) {
    const { orka, peer } = setup;
    const model = `m-${name}`;
    peer.script(model, [{ toolCalls: calls }, { text: "done" }]);
    const created = await orka.api("POST", "/api/v1/tasks", { name, type: "ai", prompt: "use the tools", ai: { providerRef: { name: "peer" }, model, tools } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const task = await orka.waitFor(name, undefined, 30_000);
    const requests = peer.requests.filter((r) => r.body.model === model);
    return { task, offered: (requests[0]?.body.tools ?? []) as { function?: { name: string; parameters: unknown }; name?: string }[], results: requests[1] ? toolResultsOf(requests[1].body) : [] };
  }
  const offeredNames = (offered: { function?: { name: string }; name?: string }[]) => offered.map((t) => t.function?.name ?? t.name);

  beforeAll(async () => {
    everything = await startEverything();
    downPort = await freePort();
    dying = await startDyingServer();
    setup = await startOrkaWithPeer("", { ORKA_ALLOW_LOOPBACK_EGRESS: "true" });
    await createTool("everything", { url: `http://127.0.0.1:${everything.port}` });
    await createTool("sums", { url: `http://127.0.0.1:${everything.port}`, tools: ["get-sum"] });
    await createTool("slow", { url: `http://127.0.0.1:${everything.port}`, tools: ["trigger-long-running-operation"], timeout: "2s" });
    await createTool("down", { url: `http://127.0.0.1:${downPort}` });
  }, 30_000);
  afterAll(async () => {
    await setup?.stop();
    stop(everything?.child);
    dying?.server.close();
  });

  it("the probe lists the server's tools with their input schemas", async () => {
    const status = await probed("everything");
    expect(status.available).toBe(true);
    const echo = status.mcpTools.find((t: { name: string }) => t.name === "echo");
    expect(echo.modelName).toBe("everything_echo");
    expect(echo.inputSchema.properties.message.type).toBe("string");
    expect(status.mcpTools.map((t: { modelName: string }) => t.modelName)).toContain("everything_get-sum");
  });

  it("a Task calls the server's tools by their real schemas and gets their answers", async () => {
    await probed("everything");
    const { task, offered, results } = await runTask("calls-mcp", ["everything"], [
      { name: "everything_echo", arguments: { message: "hello mcp" } },
      { name: "everything_get-sum", arguments: { a: 2, b: 40 } },
      { name: "everything_get-sum", arguments: { a: "two", b: 40 } },
    ]);
    expect(task.status.phase).toBe("Succeeded");
    expect(offeredNames(offered)).toContain("everything_echo");
    expect(results.slice(0, 2)).toEqual(["Echo: hello mcp", "The sum of 2 and 40 is 42."]);
    // Arguments that do not fit the server's schema are refused by Orka, with what is wrong.
    expect(results[2]).toMatch(/^Error executing tool: invalid arguments: a: .*number/);
  }, 40_000);

  it("a tools filter limits what is offered, and a tool outside it is refused", async () => {
    const status = await probed("sums");
    expect(status.mcpTools.map((t: { name: string }) => t.name)).toEqual(["get-sum"]);
    const { offered, results } = await runTask("filtered", ["sums"], [{ name: "sums_echo", arguments: { message: "x" } }]);
    expect(offeredNames(offered)).toEqual(expect.arrayContaining(["sums_get-sum"]));
    expect(offeredNames(offered)).not.toContain("sums_echo");
    expect(results[0]).toContain("not enabled");
  }, 40_000);

  it("a server that is down makes the Tool unavailable, and a call gives the model a clear error", async () => {
    const status = await probed("down");
    expect(status.available).toBe(false);
    expect(status.error).toContain("MCP server unreachable");
    const { task, results } = await runTask("down-call", ["down"], [{ name: "down_echo", arguments: { message: "x" } }]);
    expect(task.status.phase).toBe("Succeeded");
    expect(results[0]).toContain("not enabled");
  }, 40_000);

  it("a server whose connection dies mid-call gives the model a clear error, and the Task goes on", async () => {
    await createTool("dying", { url: `http://127.0.0.1:${dying.port}` });
    expect((await probed("dying")).mcpTools.map((t: { modelName: string }) => t.modelName)).toEqual(["dying_crash"]);
    const { task, results } = await runTask("dead-call", ["dying"], [{ name: "dying_crash", arguments: { why: "testing" } }]);
    expect(task.status.phase).toBe("Succeeded");
    expect(results[0]).toMatch(/^Error executing tool: MCP server http:\/\/127\.0\.0\.1:\d+\/mcp: /);
    expect(dying.crashes).toBe(1);
  }, 40_000);

  it("a call that outlasts the Tool's timeout gives the model an error within it", async () => {
    await probed("slow");
    const started = Date.now();
    const { task, results } = await runTask("slow-call", ["slow"], [{ name: "slow_trigger-long-running-operation", arguments: { duration: 60, steps: 2 } }]);
    expect(task.status.phase).toBe("Succeeded");
    expect(results[0]).toContain("did not answer within 2000 ms");
    expect(Date.now() - started).toBeLessThan(20_000);
  }, 40_000);

  it("two server tools that would share a model name: the second is refused, and the status says why", async () => {
    const long = "t".repeat(60);
    await createTool(long, { url: `http://127.0.0.1:${everything.port}`, tools: ["get-sum", "get-env"] });
    const status = await probed(long);
    expect(status.mcpTools).toHaveLength(1);
    const [offered] = status.mcpTools.map((t: { name: string }) => t.name);
    const refused = offered === "get-sum" ? "get-env" : "get-sum";
    expect(status.error).toContain(`MCP tools "${offered}" and "${refused}" would both be offered as "${long}_get"; "${refused}" is not offered`);
  });

  it("a Tool that needs approval parks its MCP calls under the Tool's name until a person decides", async () => {
    const { orka, peer } = setup;
    const agent = await orka.api("POST", "/api/v1/agents", {
      metadata: { name: "gated" },
      spec: { providerRef: { name: "peer" }, model: { name: "m-gated" }, tools: [{ name: "everything" }], coordination: { enabled: true, autonomous: true, maxIterations: 2, approvalRequiredTools: ["everything"] } },
    });
    expect(agent.status, JSON.stringify(agent.body)).toBe(201);
    peer.script("m-gated", [{ toolCalls: [{ name: "everything_echo", arguments: { message: "needs a yes" } }] }, { text: "waiting" }]);
    expect((await orka.api("POST", "/api/v1/tasks", { name: "gated-run", type: "ai", agentRef: "gated", prompt: "echo" })).status).toBe(201);
    let approvals: { targetTool: string; status: string; targetArgsPreview: string }[] = [];
    for (let i = 0; i < 150 && approvals.length === 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      approvals = (await orka.api("GET", "/api/v1/tasks/gated-run/approvals")).body.approvals ?? [];
    }
    expect(approvals).toHaveLength(1);
    expect(approvals[0]).toMatchObject({ targetTool: "everything", action: 'Execute everything (its MCP tool "echo")', status: "pending", targetArgsPreview: '{"message":"needs a yes"}' });
    const results = peer.requests.filter((r) => r.body.model === "m-gated").slice(1).flatMap((r) => toolResultsOf(r.body));
    expect(results.join("\n")).not.toContain("Echo: needs a yes");
  }, 40_000);

  it("a strict schema refuses unknown mcp fields", async () => {
    const refused = await setup.orka.api("POST", "/api/v1/tools", { metadata: { name: "bad" }, spec: { description: "x", mcp: { url: "http://127.0.0.1:1", transport: "stdio" } } });
    expect(refused.status).toBe(400);
    expect(refused.body.error.message).toContain("transport");
  });
});

describe("MCP Tools and the egress guard", () => {
  let everything: { port: number; child: ChildProcess };
  let setup: Awaited<ReturnType<typeof startOrkaWithPeer>>;
  beforeAll(async () => {
    everything = await startEverything();
    setup = await startOrkaWithPeer("", {});
  }, 30_000);
  afterAll(async () => {
    await setup?.stop();
    stop(everything?.child);
  });

  it("without ORKA_ALLOW_LOOPBACK_EGRESS a loopback MCP server is refused by the probe", async () => {
    const created = await setup.orka.api("POST", "/api/v1/tools", { metadata: { name: "inside" }, spec: { description: "x", mcp: { url: `http://127.0.0.1:${everything.port}` } } });
    expect(created.status).toBe(201);
    let status: { available?: boolean; error?: string } = {};
    for (let i = 0; i < 100 && status.available === undefined; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      status = (await setup.orka.api("GET", "/api/v1/tools/inside?namespace=default")).body.status ?? {};
    }
    expect(status.available).toBe(false);
    expect(status.error).toContain("URL must not target private, loopback, or link-local addresses");
  });

  it("a call to a loopback MCP server, by address or by name, is refused before it connects", async () => {
    for (const host of ["127.0.0.1", "localhost"]) {
      const spec = { url: `http://${host}:${everything.port}`, path: "/mcp", timeout: "5s" };
      await expect(callMcpTool(spec, { egress: { allowLoopback: false } }, "echo", { message: "x" })).rejects.toThrow("URL must not target private, loopback, or link-local addresses");
    }
    await expect(callMcpTool({ url: `http://127.0.0.1:${everything.port}`, path: "/mcp", timeout: "5s" }, { egress: { allowLoopback: true } }, "echo", { message: "allowed" })).resolves.toBe("Echo: allowed");
  });
});
