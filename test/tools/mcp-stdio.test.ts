import { randomUUID } from "node:crypto";
import { mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { callMcpTool, listMcpTools, type McpReach } from "../../src/tools/custom/mcp-tool.ts";
import { sandboxedStdioLauncher } from "../../src/sandbox/stdio-server.ts";
import { processesMatching } from "../helpers/orka-server.ts";

/** The checkout whose node_modules holds the reference server and the SDK: the operator's servers directory here. */
const serversDir = dirname(realpathSync("node_modules"));
const reach: McpReach = { egress: { allowLoopback: false }, stdio: sandboxedStdioLauncher({ serversDir }) };
const fixture = readFileSync("test/fixtures/mcp-stdio-server.mjs", "utf8");

/** A word on the server's command line, so the test can find every process it started by it (the sandbox's processes are visible from outside its pid namespace). */
const marker = () => `orka-mcp-test-${randomUUID()}`;

const stdioSpec = (command: string[], extra: { env?: Record<string, string>; timeout?: string } = {}) => ({ command, path: "/mcp", timeout: "10s", ...extra });

describe("MCP Tools over stdio, their servers run in the sandbox", () => {
  const hostDir = mkdtempSync(join(tmpdir(), "orka-mcp-host-"));
  afterAll(() => rmSync(hostDir, { recursive: true, force: true }));

  it("lists the reference server's tools and calls one, each on a fresh process that is gone afterwards", async () => {
    const word = marker();
    const spec = stdioSpec(["mcp-server-everything", "stdio", word]);
    const { tools } = await listMcpTools("everything", spec, reach, 10_000);
    expect(tools.map((t) => t.modelName)).toEqual(expect.arrayContaining(["everything_echo", "everything_get-sum"]));
    await expect(callMcpTool(spec, reach, "get-sum", { a: 2, b: 40 })).resolves.toBe("The sum of 2 and 40 is 42.");
    expect(processesMatching(word)).toEqual([]);
  }, 30_000);

  it("a server that exits at once gives an error with its exit and the end of its stderr, scrubbed", async () => {
    const started = Date.now();
    const leak = `sk-${"a".repeat(24)}`;
    // Built inside the server, so the value is in its stderr only, not in the command the error names.
    const crash = stdioSpec(["node", "-e", `console.error("failed: token sk-" + "a".repeat(24)); process.exit(3)`]);
    const error = await callMcpTool(crash, reach, "echo", {}).then(() => undefined, (err: Error) => err.message);
    expect(error).toContain("the server exited (exit code 3) before it answered; its stderr ends: failed: token [REDACTED]");
    expect(error).not.toContain(leak);
    expect(Date.now() - started).toBeLessThan(5_000);
  }, 15_000);

  it("a server that hangs gives an error within the timeout, and every process it started is killed", async () => {
    const word = marker();
    // The server starts a process of its own and never answers: the whole sandbox must go, not only the server.
    // Its child's marker is put together inside the server, so only the child's command line holds it whole.
    const hang = stdioSpec(["node", "-e", `require("child_process").spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)", "${word}" + "-child"]); setInterval(() => {}, 1000)`], { timeout: "2s" });
    const started = Date.now();
    const call = callMcpTool(hang, reach, "echo", {}).then(() => "answered", (err: Error) => err.message);
    let childSeen = 0;
    for (let i = 0; i < 30 && childSeen === 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      childSeen = processesMatching(`${word}-child`).length;
    }
    expect(childSeen, "the process the server started was seen running").toBe(1);
    expect(await call).toBe("MCP server did not answer within 2000 ms");
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(processesMatching(word)).toEqual([]);
  }, 15_000);

  it("a server that prints what is not JSON-RPC gives an error quoting it, at once", async () => {
    const started = Date.now();
    const junk = stdioSpec(["node", "-e", `console.log("hello, not json"); setInterval(() => {}, 1000)`]);
    await expect(callMcpTool(junk, reach, "echo", {})).rejects.toThrow(/wrote to stdout what is not a JSON-RPC message .*"hello, not json"/);
    expect(Date.now() - started).toBeLessThan(5_000);
  }, 15_000);

  it("the server sees the Tool's env and nothing of Orka's environment", async () => {
    process.env.ORKA_STDIO_CANARY = "orka-canary-value";
    process.env.OPENAI_API_KEY = "sk-provider-canary-000000000000";
    try {
      const env = JSON.parse(await callMcpTool(stdioSpec(["mcp-server-everything", "stdio"], { env: { GREETING: "from the Tool" } }), reach, "get-env", {}));
      expect(env.GREETING).toBe("from the Tool");
      expect(Object.keys(env).filter((name) => name.startsWith("ORKA_"))).toEqual([]);
      expect(JSON.stringify(env)).not.toContain("canary");
    } finally {
      delete process.env.ORKA_STDIO_CANARY;
      delete process.env.OPENAI_API_KEY;
    }
  }, 15_000);

  it("the server reads its servers directory, but no file of the host outside its binds", async () => {
    const secret = join(hostDir, "host-secret.txt");
    writeFileSync(secret, "host secret", { mode: 0o644 });
    const reader = stdioSpec(["node", "--input-type=module", "-e", fixture]);
    const own = JSON.parse(await callMcpTool(reader, reach, "read", { path: "/mcp-servers/package.json" }));
    expect(own.name).toBeTruthy();
    await expect(callMcpTool(reader, reach, "read", { path: secret })).rejects.toThrow(/ENOENT/);
    await expect(callMcpTool(reader, reach, "read", { path: join(process.cwd(), "package.json") })).rejects.toThrow(/ENOENT/);
  }, 20_000);

  it("a server that refuses to initialize: its own error is what the caller reads", async () => {
    const refuses = stdioSpec([
      "node",
      "-e",
      `process.stdin.once("data", (line) => { const { id } = JSON.parse(String(line).split("\\n")[0]); process.stdout.write(JSON.stringify({ jsonrpc: "2.0", id, error: { code: -32600, message: "this server speaks another protocol" } }) + "\\n"); }); setInterval(() => {}, 1000)`,
    ]);
    await expect(callMcpTool(refuses, reach, "echo", {})).rejects.toThrow("this server speaks another protocol");
  }, 15_000);

  it("a server that dies during a call gives an error with its exit", async () => {
    const reader = stdioSpec(["node", "--input-type=module", "-e", fixture]);
    await expect(callMcpTool(reader, reach, "crash", { why: "asked to" })).rejects.toThrow("the server exited (exit code 7) before it answered; its stderr ends: crashing: asked to");
  }, 15_000);

  it("where no launcher is wired, a stdio Tool is refused with what to use instead", async () => {
    await expect(callMcpTool(stdioSpec(["mcp-server-everything"]), { egress: { allowLoopback: false } }, "echo", {})).rejects.toThrow("runs no stdio MCP servers; use an MCP server with mcp.url");
  });
});
