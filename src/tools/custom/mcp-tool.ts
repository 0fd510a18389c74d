import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { FetchLike, Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { Agent, fetch as undiciFetch } from "undici";
import type { ToolSpec, McpToolStatus } from "../../resources/tool.ts";
import { checkEgressUrl, EgressRefused, guardedLookup, type EgressPolicy } from "../../policy/ssrf.ts";
import { parseDuration } from "../../util/duration.ts";
import { errorMessage, OrkaError } from "../../util/errors.ts";
import { ProcessStdioTransport, type StdioServerLauncher } from "./mcp-stdio.ts";

export type McpSpec = NonNullable<ToolSpec["mcp"]>;

/** Bounds on what a server's tool list may put into a Tool's status. */
export const MCP_LIMITS = { tools: 64, pages: 10, description: 1024, schemaBytes: 16 * 1024 };
const MAX_TEXT_BYTES = 10 * 1024 * 1024;

/** Where an MCP Tool's server listens: `url` with `path`; none for a server started from `command`. */
export function mcpEndpoint(spec: McpSpec): string | undefined {
  return spec.url ? new URL(spec.path ?? "/mcp", spec.url).toString() : undefined;
}

/** The name the model knows an MCP tool by: `<Tool>_<mcp tool>`, anything outside `[a-zA-Z0-9_-]` made `_`, at most 64 characters. */
export function mcpModelToolName(toolName: string, mcpTool: string): string {
  return `${toolName}_${mcpTool}`.replace(/[^a-zA-Z0-9_-]/g, "_").slice(0, 64);
}

/**
 * A fetch that goes only where a user's HTTP Tool may: the URL is checked before connecting, every DNS
 * answer when connecting, and a redirect is answered rather than followed. The server's standing
 * notification stream (GET) is declined, so nothing stays open between calls.
 */
function guardedFetch(egress: EgressPolicy, dispatcher: Agent): FetchLike {
  return async (url, init) => {
    checkEgressUrl(url.toString(), egress);
    if ((init?.method ?? "GET") === "GET") return new Response(null, { status: 405 });
    try {
      const response = await undiciFetch(url.toString(), { ...(init as object), redirect: "manual", dispatcher });
      return response as unknown as Response;
    } catch (err) {
      // fetch wraps the guarded lookup's refusal in "fetch failed"; the refusal is what the Tool's owner needs to read.
      const cause = (err as { cause?: unknown }).cause;
      throw cause instanceof EgressRefused ? cause : err;
    }
  };
}

/** What an MCP Tool's server is reached through: the egress guard for a URL, the sandboxed launcher for a command. */
export interface McpReach {
  egress: EgressPolicy;
  /** Absent where no stdio server may run; such Tools are then unavailable. */
  stdio?: StdioServerLauncher;
}

/** The largest JSON-RPC message a stdio server may send (the cap on a result's text comes after). */
const MAX_STDIO_MESSAGE_BYTES = 2 * MAX_TEXT_BYTES;
const MAX_COMMAND_LABEL_CHARS = 200;

/** How errors name the server: its URL, or its command. */
function mcpServerLabel(spec: McpSpec): string {
  return mcpEndpoint(spec) ?? `\`${(spec.command ?? []).join(" ").slice(0, MAX_COMMAND_LABEL_CHARS)}\``;
}

interface McpConnection {
  transport: Transport;
  /** Why the session ended early, when the transport knows better than the client's "connection closed". */
  failure(): string | undefined;
  release(): Promise<void>;
}

function connectionFor(spec: McpSpec, reach: McpReach, signal: AbortSignal): McpConnection {
  const endpoint = mcpEndpoint(spec);
  if (endpoint) {
    const dispatcher = new Agent({ connect: { lookup: guardedLookup(reach.egress) } });
    const transport = new StreamableHTTPClientTransport(new URL(endpoint), { fetch: guardedFetch(reach.egress, dispatcher), requestInit: { signal } });
    return { transport, failure: () => undefined, release: () => dispatcher.destroy().catch(() => undefined) };
  }
  const { command, env } = spec;
  if (!command) throw new OrkaError("invalid_argument", "MCP Tools need mcp.url or mcp.command");
  const launch = reach.stdio;
  if (!launch) throw new OrkaError("unavailable", "this Orka process runs no stdio MCP servers; use an MCP server with mcp.url");
  const transport = new ProcessStdioTransport(() => launch({ command, env: env ?? {} }), MAX_STDIO_MESSAGE_BYTES);
  return { transport, failure: () => transport.failure, release: async () => undefined };
}

/**
 * Runs `use` with a connected client on a fresh session (for a command, a fresh server process), within
 * the Tool's timeout in all; the session is closed after, and a command's process with it.
 */
async function withMcpClient<T>(spec: McpSpec, reach: McpReach, timeoutMs: number, use: (client: Client, signal: AbortSignal) => Promise<T>): Promise<T> {
  const signal = AbortSignal.timeout(timeoutMs);
  const connection = connectionFor(spec, reach, signal);
  const client = new Client({ name: "orka", version: "1" });
  const deadline = new Promise<never>((_, reject) => {
    signal.addEventListener("abort", () => reject(new OrkaError("deadline_exceeded", `MCP server did not answer within ${timeoutMs} ms`)), { once: true });
  });
  try {
    const options = { timeout: timeoutMs, signal };
    return await Promise.race([client.connect(connection.transport, options).then(() => use(client, signal)), deadline]);
  } catch (err) {
    if (err instanceof OrkaError) throw err;
    throw new OrkaError("unavailable", `MCP server ${mcpServerLabel(spec)}: ${connection.failure() ?? errorMessage(err)}`);
  } finally {
    await client.close().catch(() => undefined);
    await connection.release();
  }
}

/** The server's tools as the Tool offers them (all, or those `spec.tools` names), with their model names; bounded. */
export async function listMcpTools(toolName: string, spec: McpSpec, reach: McpReach, timeoutMs: number): Promise<{ tools: McpToolStatus[]; notes: string[] }> {
  const listed = await withMcpClient(spec, reach, timeoutMs, async (client, signal) => {
    const all: Awaited<ReturnType<Client["listTools"]>>["tools"] = [];
    let cursor: string | undefined;
    for (let page = 0; page < MCP_LIMITS.pages; page++) {
      const answer = await client.listTools(cursor ? { cursor } : undefined, { timeout: timeoutMs, signal });
      all.push(...answer.tools);
      cursor = answer.nextCursor;
      if (!cursor) break;
    }
    return all;
  });
  const notes: string[] = [];
  const wanted = spec.tools ? new Set(spec.tools) : undefined;
  for (const name of spec.tools ?? []) if (!listed.some((t) => t.name === name)) notes.push(`the server has no tool "${name}"`);
  const offered = listed.filter((t) => !wanted || wanted.has(t.name));
  if (offered.length > MCP_LIMITS.tools) notes.push(`the server offers ${offered.length} tools; only the first ${MCP_LIMITS.tools} are offered (name the ones you want in mcp.tools)`);
  const tools: McpToolStatus[] = [];
  for (const tool of offered.slice(0, MCP_LIMITS.tools)) {
    const modelName = mcpModelToolName(toolName, tool.name);
    const clash = tools.find((t) => t.modelName === modelName);
    if (clash) {
      notes.push(`MCP tools "${clash.name}" and "${tool.name}" would both be offered as "${modelName}"; "${tool.name}" is not offered (leave one out with mcp.tools)`);
      continue;
    }
    const inputSchema = JSON.stringify(tool.inputSchema).length <= MCP_LIMITS.schemaBytes ? tool.inputSchema : undefined;
    if (!inputSchema) {
      notes.push(`the input schema of "${tool.name}" is larger than ${MCP_LIMITS.schemaBytes} bytes; it is not offered`);
      continue;
    }
    tools.push({ name: tool.name, modelName, description: (tool.description ?? tool.title ?? tool.name).slice(0, MCP_LIMITS.description), inputSchema });
  }
  return { tools, notes };
}

/** Calls one tool of an MCP server; its content as text, or an error when the server reports one. */
export async function callMcpTool(spec: McpSpec, reach: McpReach, mcpTool: string, args: Record<string, unknown>): Promise<string> {
  const timeoutMs = parseDuration(spec.timeout);
  const result = await withMcpClient(spec, reach, timeoutMs, (client, signal) => client.callTool({ name: mcpTool, arguments: args }, undefined, { timeout: timeoutMs, signal }));
  const text = capText(mcpContentText(result.content as McpContent[] | undefined, result.structuredContent));
  if (result.isError) throw new OrkaError("invalid_argument", `MCP tool "${mcpTool}" reported an error: ${text}`);
  return text;
}

type McpContent = { type: string; text?: string; mimeType?: string; data?: string; uri?: string; name?: string; resource?: { uri?: string; mimeType?: string; text?: string } };

/** Text parts joined; anything else named in one line, so the model knows it was there. */
export function mcpContentText(content: McpContent[] | undefined, structured?: unknown): string {
  const parts = (content ?? []).map((part) => {
    switch (part.type) {
      case "text":
        return part.text ?? "";
      case "image":
      case "audio":
        return `[${part.type} ${part.mimeType ?? ""}, ${Math.floor(((part.data ?? "").length * 3) / 4)} bytes, not shown]`;
      case "resource_link":
        return `[resource link ${part.uri ?? ""}${part.name ? ` (${part.name})` : ""}]`;
      case "resource":
        return part.resource?.text ?? `[resource ${part.resource?.uri ?? ""} ${part.resource?.mimeType ?? ""}, not shown]`;
      default:
        return `[${part.type} content, not shown]`;
    }
  });
  if (parts.length === 0 && structured !== undefined) return JSON.stringify(structured, null, 2);
  return parts.join("\n");
}

function capText(text: string): string {
  const bytes = Buffer.from(text, "utf8");
  if (bytes.length <= MAX_TEXT_BYTES) return text;
  let end = MAX_TEXT_BYTES;
  while (end > 0 && (bytes[end] & 0xc0) === 0x80) end--;
  return `${bytes.subarray(0, end).toString("utf8")}\n[tool result truncated: ${bytes.length - end} bytes omitted]`;
}
