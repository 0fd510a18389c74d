import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { pipeline } from "node:stream/promises";
import { Agent, request, type Dispatcher } from "undici";
import type { ProviderWire } from "./adapter.ts";
import type { ModelEndpoint } from "../providers/index.ts";
import { redact } from "../policy/redact.ts";
import { OrkaError } from "../util/errors.ts";

/** The session's model API on loopback: the CLI's base URL and the token it must send; the Provider key stays here. */
export interface ProviderProxy {
  baseURL: string;
  token: string;
  close(): Promise<void>;
}

/** A CLI's whole conversation goes up in every request; past this it is not a coding session any more. */
const MAX_REQUEST_BYTES = 8 * 1024 * 1024;
/** Enough of an upstream error to tell what went wrong, small enough to scrub in memory. */
const MAX_ERROR_BYTES = 64 * 1024;
/** A model call's deadline when the Provider sets none: a long agent turn streams for minutes. */
const DEFAULT_UPSTREAM_TIMEOUT_MS = 10 * 60_000;

interface WireRules {
  providerType: ModelEndpoint["type"];
  /** The paths the CLI may call, all POST with a JSON body naming the model. */
  paths: string[];
  /** Where the CLI's base URL ends, so that it appends the paths above to it. */
  basePath: string;
  defaultUpstream: string;
  /** The header the Provider's API takes its key in. */
  keyHeader: (key: string) => Record<string, string>;
  /** Request headers that change what the API does, passed on as they came. */
  forwardedHeaders: string[];
  errorBody: (status: number, message: string) => unknown;
}

const anthropicRules: WireRules = {
  providerType: "anthropic",
  // claude counts tokens before it compacts a long conversation.
  paths: ["/v1/messages", "/v1/messages/count_tokens"],
  basePath: "",
  defaultUpstream: "https://api.anthropic.com",
  keyHeader: (key) => ({ "x-api-key": key }),
  forwardedHeaders: ["content-type", "accept", "anthropic-version", "anthropic-beta", "user-agent"],
  errorBody: (status, message) => ({ type: "error", error: { type: status === 401 ? "authentication_error" : status === 403 ? "permission_error" : status === 404 ? "not_found_error" : status >= 500 ? "api_error" : "invalid_request_error", message } }),
};

const openAIRules = (paths: string[]): WireRules => ({
  providerType: "openai",
  paths,
  basePath: "/v1",
  defaultUpstream: "https://api.openai.com/v1",
  keyHeader: (key) => ({ authorization: `Bearer ${key}` }),
  forwardedHeaders: ["content-type", "accept", "openai-beta", "user-agent"],
  errorBody: (status, message) => ({ error: { message, type: status >= 500 ? "server_error" : "invalid_request_error", code: null } }),
});

const WIRES: Record<ProviderWire, WireRules> = {
  "anthropic-messages": anthropicRules,
  "openai-responses": openAIRules(["/v1/responses"]),
  "openai-chat": openAIRules(["/v1/chat/completions"]),
};

/** Response headers that describe one connection, not the answer. */
const HOP_BY_HOP = new Set(["connection", "keep-alive", "transfer-encoding", "upgrade", "proxy-authenticate", "trailer", "te"]);

/**
 * Starts a session's provider proxy on 127.0.0.1: it takes the wire's model paths only, with the
 * session's random token (x-api-key or Authorization Bearer) and the pinned model, and forwards each
 * request to the Provider with the real key, streaming the answer back as it comes. A model other
 * than the pinned one is refused, not rewritten: the adapters pin every model alias the CLI has to
 * the pinned model, so another name means the CLI was not launched as Orka launched it.
 */
export async function startProviderProxy(options: { endpoint: ModelEndpoint; wire: ProviderWire }): Promise<ProviderProxy> {
  const { endpoint, wire } = options;
  const rules = WIRES[wire];
  if (endpoint.type !== rules.providerType) {
    throw new OrkaError("failed_precondition", `Provider ${endpoint.name} is of type ${endpoint.type}, but this runtime speaks ${wire}; use a Provider of type ${rules.providerType}`);
  }
  const apiKey = providerKey(endpoint);
  const upstreamBase = (endpoint.baseURL ?? rules.defaultUpstream).replace(/\/+$/, "");
  const token = randomBytes(32).toString("base64url");
  const timeoutMs = endpoint.timeoutMs ?? DEFAULT_UPSTREAM_TIMEOUT_MS;
  const dispatcher = new Agent({ headersTimeout: timeoutMs, bodyTimeout: timeoutMs });

  const server = http.createServer((req, res) => {
    void serve(req, res).catch(() => reply(res, 502, "the model request could not be forwarded"));
  });

  async function serve(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const path = new URL(req.url ?? "/", "http://proxy").pathname;
    if (req.method !== "POST" || !rules.paths.includes(path)) return reply(res, 404, `this proxy serves only POST ${rules.paths.join(", ")}`);
    if (!carriesToken(req, token)) return reply(res, 401, "missing or wrong session token");
    if (Number(req.headers["content-length"] ?? 0) > MAX_REQUEST_BYTES) return reply(res, 413, `request body over ${MAX_REQUEST_BYTES} bytes`);
    const body = await readBounded(req, MAX_REQUEST_BYTES);
    if (body === undefined) return reply(res, 413, `request body over ${MAX_REQUEST_BYTES} bytes`);
    const model = modelOf(body);
    if (model === undefined) return reply(res, 400, "the request body must be a JSON object with a model");
    if (model !== endpoint.model) return reply(res, 403, `this session may use model "${endpoint.model}" only, not "${model}"`);
    await forward(req, res, path, body);
  }

  async function forward(req: http.IncomingMessage, res: http.ServerResponse, path: string, body: Buffer): Promise<void> {
    const abort = new AbortController();
    res.once("close", () => abort.abort());
    let answer: Dispatcher.ResponseData;
    try {
      answer = await request(upstreamURL(upstreamBase, rules, path, req.url), {
        method: "POST",
        headers: { ...pick(req.headers, rules.forwardedHeaders), ...rules.keyHeader(apiKey) },
        body,
        dispatcher,
        signal: abort.signal,
      });
    } catch (err) {
      if (abort.signal.aborted) return;
      return reply(res, 502, `the Provider ${endpoint.name} could not be reached: ${redact(err instanceof Error ? err.message : String(err), [apiKey])}`);
    }
    const headers = passedHeaders(answer.headers);
    if (answer.statusCode >= 400) {
      // An error may quote the credential it was sent (a 401 often does): scrub it before the CLI sees it.
      const text = redact((await readBounded(answer.body, MAX_ERROR_BYTES, true))!.toString("utf8"), [apiKey]);
      delete headers["content-length"];
      res.writeHead(answer.statusCode, headers).end(text);
      return;
    }
    res.writeHead(answer.statusCode, headers);
    await pipeline(answer.body, res);
  }

  function reply(res: http.ServerResponse, status: number, message: string): void {
    if (res.headersSent) return void res.destroy();
    res.writeHead(status, { "content-type": "application/json", "cache-control": "no-store" }).end(JSON.stringify(rules.errorBody(status, message)));
  }

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}${rules.basePath}`,
    token,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await dispatcher.close();
    },
  };
}

function providerKey(endpoint: ModelEndpoint): string {
  if (!endpoint.apiKey) throw new OrkaError("failed_precondition", `API key for ${endpoint.name} not found`);
  return endpoint.apiKey;
}

/** The Provider's URL for a proxied path: its base URL already ends where the wire's base path does (`…/v1` for OpenAI). */
function upstreamURL(base: string, rules: WireRules, path: string, requestURL: string | undefined): string {
  const query = new URL(requestURL ?? "/", "http://proxy").search;
  const trimmedBase = rules.basePath === "" ? base.replace(/\/v1$/, "") : base;
  return `${trimmedBase}${path.slice(rules.basePath.length)}${query}`;
}

function carriesToken(req: http.IncomingMessage, token: string): boolean {
  const bearer = /^Bearer\s+(.+)$/i.exec(req.headers.authorization ?? "")?.[1];
  const presented = bearer ?? req.headers["x-api-key"];
  return typeof presented === "string" && sameSecret(presented, token);
}

/** Compares digests, so neither the length nor the content of the token leaks through timing. */
function sameSecret(presented: string, expected: string): boolean {
  const digest = (text: string) => createHash("sha256").update(text).digest();
  return timingSafeEqual(digest(presented), digest(expected));
}

function modelOf(body: Buffer): string | undefined {
  try {
    const parsed: unknown = JSON.parse(body.toString("utf8"));
    const model = parsed !== null && typeof parsed === "object" && !Array.isArray(parsed) ? (parsed as { model?: unknown }).model : undefined;
    return typeof model === "string" ? model : undefined;
  } catch {
    return undefined;
  }
}

/** The body, or undefined past `limit` bytes (or the first `limit` bytes when `truncate`). */
async function readBounded(stream: AsyncIterable<Buffer>, limit: number, truncate = false): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    size += chunk.length;
    if (size > limit) {
      if (!truncate) return undefined;
      chunks.push(chunk.subarray(0, chunk.length - (size - limit)));
      break;
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

function pick(headers: http.IncomingHttpHeaders, names: string[]): Record<string, string> {
  const picked: Record<string, string> = {};
  for (const name of names) {
    const value = headers[name];
    if (typeof value === "string") picked[name] = value;
  }
  return picked;
}

function passedHeaders(headers: Dispatcher.ResponseData["headers"]): Record<string, string | string[]> {
  const passed: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers)) if (value !== undefined && !HOP_BY_HOP.has(name.toLowerCase())) passed[name] = value;
  return passed;
}
