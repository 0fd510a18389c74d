import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from "node:http";
import { isIPv4, type AddressInfo } from "node:net";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { CallToolRequestSchema, ListToolsRequestSchema, SUPPORTED_PROTOCOL_VERSIONS, type CallToolResult, type RequestId } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import type { BrokeredTool } from "../runner/attempt-config.ts";
import { withCallSignal } from "../util/call-signal.ts";
import { errorMessage } from "../util/errors.ts";
import { sha256Hex } from "../util/hash.ts";
import { BrokerRefusal, type BrokeredCallRunner } from "./calls.ts";

/**
 * The MCP broker of a worker process: one loopback HTTP listener, one route and bearer per coding-agent
 * session. It speaks MCP (Streamable HTTP, stateless, JSON responses) through the official SDK, and does in
 * front of it what the SDK does not: the transport checks (peer, method, route, bearer, concurrency), the
 * size and shape of a JSON-RPC message, and the exact shape of a `tools/call`. Every call then goes to the
 * session's `run`, which rechecks the Task's policy; the broker itself only knows which tools it lists.
 */

const BROKER_ROUTE_PREFIX = "/_orka/mcp/";
export const BROKER_LIMITS = {
  bodyBytes: 320 * 1024,
  argumentBytes: 256 * 1024,
  resultBytes: 1024 * 1024,
  concurrentPerBroker: 16,
  concurrentPerSession: 2,
  /** A body past this is not even drained: the connection is cut. */
  drainedBodyBytes: 4 * 1024 * 1024,
  /** Revoked routes remembered, so a late call gets "not authorized" rather than "unknown route". */
  revokedRoutesKept: 1024,
} as const;

/** The broker's own version: what it answers changes only with it. */
const BROKER_VERSION = "1.0.0";
/** The MCP version the broker answers a client asking for one it does not speak (the SDK agrees to any version it supports). */
const BROKER_PROTOCOL_VERSION = "2025-06-18";
const NOT_AUTHORIZED = { code: -32001, message: "MCP tool call is not authorized" } as const;
const CALL_FAILED = { code: -32002, message: "MCP broker call failed" } as const;
const INVALID_REQUEST = -32600;
const INVALID_PARAMS = -32602;

export interface BrokerSession {
  /** `http://127.0.0.1:<port>/_orka/mcp/<route>`: the URL the CLI's MCP configuration names. */
  url: string;
  /** Sent by the CLI as `Authorization: Bearer <bearer>`. */
  bearer: string;
  /** Revokes the route at once: later calls are not authorized, calls in flight see their signal abort. */
  close(): void;
}

export interface McpBroker {
  open(options: { tools: BrokeredTool[]; run: BrokeredCallRunner }): BrokerSession;
  close(): Promise<void>;
}

interface Route {
  bearerDigest: Buffer;
  tools: BrokeredTool[];
  run: BrokeredCallRunner;
  revoked: AbortController;
  inFlight: number;
}

const requestIdSchema = z.union([z.string(), z.number()]);
const jsonRpcMessageSchema = z.strictObject({
  jsonrpc: z.literal("2.0"),
  id: requestIdSchema.optional(),
  method: z.string().min(1),
  params: z.record(z.string(), z.unknown()).optional(),
});
/** `_meta` is MCP's own field on every request's params (clients put a progress token or their tool-use id there); it never reaches the tool. */
const toolsCallParamsSchema = z.strictObject({
  name: z.string().min(1),
  arguments: z.record(z.string(), z.unknown()).optional(),
  _meta: z.record(z.string(), z.unknown()).optional(),
});

/** Starts the worker's broker on 127.0.0.1 (a free port). */
export async function startMcpBroker(): Promise<McpBroker> {
  const routes = new Map<string, Route>();
  const revokedOrder: string[] = [];
  const counter = { inFlight: 0 };
  const http = createServer((req, res) => void serve(req, res, routes, counter));
  await new Promise<void>((resolve, reject) => {
    http.once("error", reject);
    http.listen(0, "127.0.0.1", () => resolve());
  });
  const origin = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  return {
    open({ tools, run }) {
      const routeId = randomBytes(24).toString("base64url");
      const bearer = randomBytes(32).toString("base64url");
      const route: Route = { bearerDigest: digest(bearer), tools: [...tools], run, revoked: new AbortController(), inFlight: 0 };
      routes.set(routeId, route);
      return {
        url: `${origin}${BROKER_ROUTE_PREFIX}${routeId}`,
        bearer,
        close() {
          if (route.revoked.signal.aborted) return;
          route.revoked.abort();
          revokedOrder.push(routeId);
          if (revokedOrder.length > BROKER_LIMITS.revokedRoutesKept) routes.delete(revokedOrder.shift() as string);
        },
      };
    },
    close: () => closeHttp(http, routes),
  };
}

async function closeHttp(http: HttpServer, routes: Map<string, Route>): Promise<void> {
  for (const route of routes.values()) route.revoked.abort();
  routes.clear();
  http.closeAllConnections();
  await new Promise<void>((resolve) => http.close(() => resolve()));
}

/** Whether a TCP peer address is this machine's loopback (IPv4 127/8, IPv6 ::1, or IPv4-mapped 127/8). */
export function isLoopbackAddress(address: string | undefined): boolean {
  if (!address) return false;
  const v4 = address.toLowerCase().startsWith("::ffff:") ? address.slice(7) : address;
  return isIPv4(v4) ? v4.startsWith("127.") : address === "::1";
}

async function serve(req: IncomingMessage, res: ServerResponse, routes: Map<string, Route>, counter: { inFlight: number }): Promise<void> {
  res.setHeader("Cache-Control", "no-store");
  if (!isLoopbackAddress(req.socket.remoteAddress) || req.method !== "POST") return refuse(res, 403, "the MCP broker takes POST requests from this machine only");
  const route = routes.get(routeIdOf(req.url));
  if (!route) return refuse(res, 404, "no MCP broker session at this URL");
  if (!bearerMatches(req.headers.authorization, route.bearerDigest)) {
    res.setHeader("WWW-Authenticate", "Bearer");
    return refuse(res, 401, "the session's bearer token is missing or wrong");
  }
  if (counter.inFlight >= BROKER_LIMITS.concurrentPerBroker || route.inFlight >= BROKER_LIMITS.concurrentPerSession) {
    res.setHeader("Retry-After", "1");
    return refuse(res, 429, `too many MCP requests at once: at most ${BROKER_LIMITS.concurrentPerSession} per session and ${BROKER_LIMITS.concurrentPerBroker} per worker`);
  }
  counter.inFlight++;
  route.inFlight++;
  res.once("close", () => {
    counter.inFlight--;
    route.inFlight--;
  });
  try {
    const body = await readBody(req);
    if (body === undefined) return;
    const checked = checkMessage(body);
    if ("error" in checked) return replyError(res, checked.id ?? null, checked.code, checked.error);
    await answer(req, res, route, checked.message);
  } catch (err) {
    if (!res.headersSent) replyError(res, null, CALL_FAILED.code, `${CALL_FAILED.message}: ${errorMessage(err)}`);
  }
}

function routeIdOf(url: string | undefined): string {
  const path = (url ?? "").split("?")[0];
  return path.startsWith(BROKER_ROUTE_PREFIX) ? path.slice(BROKER_ROUTE_PREFIX.length) : "";
}

function digest(secret: string): Buffer {
  return createHash("sha256").update(secret).digest();
}

/** Compares digests, which have one length, so the comparison takes the same time whatever was sent. */
function bearerMatches(header: string | undefined, expected: Buffer): boolean {
  const sent = /^Bearer (\S+)$/i.exec(header ?? "")?.[1];
  return sent !== undefined && timingSafeEqual(digest(sent), expected);
}

/** The body as text, or `{ tooLarge }`; undefined when the connection had to be cut. */
async function readBody(req: IncomingMessage): Promise<string | { tooLarge: number } | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > BROKER_LIMITS.drainedBodyBytes) {
      req.socket.destroy();
      return undefined;
    }
    if (size <= BROKER_LIMITS.bodyBytes) chunks.push(chunk);
  }
  return size > BROKER_LIMITS.bodyBytes ? { tooLarge: size } : Buffer.concat(chunks).toString("utf8");
}

type JsonRpcMessage = z.infer<typeof jsonRpcMessageSchema>;
type Checked = { message: JsonRpcMessage } | { id?: RequestId; code: number; error: string };

/** One JSON-RPC 2.0 request or notification within the size limit; a `tools/call` with an id and exactly `{name, arguments?}`. */
function checkMessage(body: string | { tooLarge: number }): Checked {
  if (typeof body !== "string") return { code: INVALID_REQUEST, error: `the request body is ${body.tooLarge} bytes; at most ${BROKER_LIMITS.bodyBytes} are allowed` };
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    return { code: INVALID_REQUEST, error: "the request body is not JSON: send one JSON-RPC 2.0 message" };
  }
  const parsed = jsonRpcMessageSchema.safeParse(json);
  if (!parsed.success) return { code: INVALID_REQUEST, error: "the request body must be one JSON-RPC 2.0 request object ({jsonrpc: \"2.0\", id, method, params?}); batches are not accepted" };
  const message = parsed.data;
  if (message.method !== "tools/call") return { message };
  if (message.id === undefined) return { code: INVALID_REQUEST, error: "tools/call must be a request with an id" };
  const params = toolsCallParamsSchema.safeParse(message.params ?? {});
  if (!params.success) return { id: message.id, code: INVALID_PARAMS, error: "tools/call params must be exactly {name, arguments?} (and MCP's _meta) with a tool name and an arguments object" };
  const argumentBytes = Buffer.byteLength(JSON.stringify(params.data.arguments ?? {}));
  if (argumentBytes > BROKER_LIMITS.argumentBytes) {
    return { id: message.id, code: INVALID_PARAMS, error: `the tool arguments are ${argumentBytes} bytes of JSON; at most ${BROKER_LIMITS.argumentBytes} are allowed` };
  }
  return { message };
}

function refuse(res: ServerResponse, status: number, message: string): void {
  res.writeHead(status, { "Content-Type": "application/json" });
  res.end(JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32000, message } }));
}

function replyError(res: ServerResponse, id: RequestId | null, code: number, message: string): void {
  res.writeHead(200, { "Content-Type": "application/json" });
  res.end(JSON.stringify({ jsonrpc: "2.0", id, error: { code, message } }));
}

/** Hands a checked message to a fresh SDK server bound to the route (stateless: one server per request). */
async function answer(req: IncomingMessage, res: ServerResponse, route: Route, message: JsonRpcMessage): Promise<void> {
  const server = new Server({ name: "orka-prompt-broker", version: BROKER_VERSION }, { capabilities: { tools: { listChanged: false } } });
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: route.revoked.signal.aborted ? [] : route.tools.map(({ name, description, inputSchema }) => ({ name, description, inputSchema: inputSchema as { type: "object" } })),
  }));
  server.setRequestHandler(CallToolRequestSchema, (request, extra) =>
    callTool(route, { name: request.params.name, arguments: request.params.arguments ?? {}, callId: callIdOf(extra.requestId, request.params.name, request.params.arguments ?? {}) }, extra.signal),
  );
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  res.once("close", () => void server.close());
  await server.connect(transport);
  await transport.handleRequest(req, res, withSpokenProtocolVersion(message));
}

function withSpokenProtocolVersion(message: JsonRpcMessage): JsonRpcMessage {
  const asked = message.params?.protocolVersion;
  if (message.method !== "initialize" || (typeof asked === "string" && SUPPORTED_PROTOCOL_VERSIONS.includes(asked))) return message;
  return { ...message, params: { ...message.params, protocolVersion: BROKER_PROTOCOL_VERSION } };
}

/**
 * The request id when it is a usable call id, else a digest of it with the call: clients number their
 * requests from 0 again after a reconnect, so a bare number would make a new call look like a replay.
 */
function callIdOf(id: RequestId, name: string, args: Record<string, unknown>): string {
  return typeof id === "string" && id.length <= 256 && !/\s/.test(id) ? id : `rpc-${sha256Hex(JSON.stringify([id, name, args]))}`;
}

class JsonRpcFailure extends Error {
  readonly code: number;

  constructor(failure: { code: number; message: string }, detail: string) {
    super(`${failure.message}: ${detail}`);
    this.code = failure.code;
  }
}

async function callTool(route: Route, call: { name: string; arguments: Record<string, unknown>; callId: string }, requestSignal: AbortSignal): Promise<CallToolResult> {
  if (route.revoked.signal.aborted) throw new JsonRpcFailure(NOT_AUTHORIZED, "the session has ended");
  if (!route.tools.some((tool) => tool.name === call.name)) throw new JsonRpcFailure(NOT_AUTHORIZED, `the tool ${JSON.stringify(call.name)} is not offered in this session`);
  let result;
  try {
    result = await withCallSignal({ parents: [route.revoked.signal, requestSignal] }, (signal) => route.run(call, signal));
  } catch (err) {
    if (err instanceof BrokerRefusal && err.kind === "not_authorized") throw new JsonRpcFailure(NOT_AUTHORIZED, err.message);
    throw new JsonRpcFailure(CALL_FAILED, errorMessage(err));
  }
  if (route.revoked.signal.aborted) throw new JsonRpcFailure(CALL_FAILED, "the session ended while the tool ran; its result was dropped");
  const resultBytes = Buffer.byteLength(result.text);
  if (resultBytes > BROKER_LIMITS.resultBytes) throw new JsonRpcFailure(CALL_FAILED, `the tool's result is ${resultBytes} bytes; at most ${BROKER_LIMITS.resultBytes} are allowed`);
  const structured = jsonObjectIn(result.text);
  return {
    content: [{ type: "text", text: result.text }],
    isError: result.isError,
    ...(structured ? { structuredContent: structured } : {}),
    ...(result.replayed ? { _meta: { "orka.replayed": true } } : {}),
  };
}

function jsonObjectIn(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return value && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
