// The real coding CLIs for tests: installed once per machine into the repository's git-ignored
// .cache/coding-clis at the pinned versions, and a small MCP server standing in for Orka's broker.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { z } from "zod";
import type { RuntimeType } from "../../src/resources/agent.ts";
import { ensureCli } from "../../src/runtimes/install.ts";
import { PINNED_CLIS } from "../../src/runtimes/versions.ts";

export const CODING_CLI_CACHE = fileURLToPath(new URL("../../.cache/coding-clis", import.meta.url));

/** The pinned CLI's executable, installed from the npm registry on first use (about 20 s each on a fresh machine). */
export function installedCli(runtime: RuntimeType): Promise<string> {
  return ensureCli(PINNED_CLIS[runtime], CODING_CLI_CACHE);
}

/** What the pinned CLI is, for a test's title: `@openai/codex@0.171.0`. */
export function pinnedName(runtime: RuntimeType): string {
  return `${PINNED_CLIS[runtime].packageName}@${PINNED_CLIS[runtime].version}`;
}

export interface CountingMcpServer {
  url: string;
  bearer: string;
  /** Queries `web_search` was called with, in order. */
  calls: string[];
  /** Requests refused for a missing or wrong bearer. */
  unauthorized: number;
  close(): Promise<void>;
}

/** One tool, `web_search`, over Streamable HTTP (the SDK's own server, stateless) behind a bearer, answering `answer(query)`. */
export async function startCountingMcpServer(answer: (query: string) => string): Promise<CountingMcpServer> {
  const bearer = `mcp-bearer-${Math.random().toString(36).slice(2)}`;
  const state = { calls: [] as string[], unauthorized: 0 };
  const server = http.createServer(async (req, res) => {
    if (req.headers.authorization !== `Bearer ${bearer}`) {
      state.unauthorized++;
      return void res.writeHead(401).end();
    }
    const mcp = new McpServer({ name: "orka", version: "1" });
    mcp.registerTool("web_search", { description: "Search the web.", inputSchema: { query: z.string() } }, async ({ query }) => {
      state.calls.push(query);
      return { content: [{ type: "text", text: answer(query) }] };
    });
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on("close", () => void mcp.close());
    await mcp.connect(transport);
    await transport.handleRequest(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/_orka/mcp/route`,
    bearer,
    get calls() {
      return state.calls;
    },
    get unauthorized() {
      return state.unauthorized;
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
