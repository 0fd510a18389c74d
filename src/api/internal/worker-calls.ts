import FindMyWay from "find-my-way";
import { errorCodes, type FastifyBaseLogger } from "fastify";
import { OrkaError } from "../../util/errors.ts";
import type { ApiContext } from "../context.ts";
import { errorBody } from "../errors.ts";
import { auditRefusal } from "../refusals.ts";
import { MAX_REQUEST_BODY_BYTES, refuseRepeatedQuery } from "../request-input.ts";
import { answerWorkerRequest, errorAnswer } from "./worker-pipeline.ts";
import { jsonAnswer, WORKER_API_PREFIX, type WorkerAnswer, type WorkerRequest, type WorkerRoute } from "./worker-route.ts";

/** A pooled worker's request to the worker API, as it arrives over the pool's IPC channel. */
export interface WorkerCall {
  method: string;
  /** Under `/internal/v1`, with its query. */
  path: string;
  headers: Record<string, string>;
  /** Bytes arrive over IPC as a Uint8Array. */
  body?: string | Uint8Array;
}

/** How a pooled worker's calls are answered: status and body, as over HTTP. */
export type WorkerCallAnswerer = (call: WorkerCall, signal: AbortSignal) => Promise<{ status: number; text: string }>;

/** What the server makes of a call's body, the same rules as for an HTTP request's. */
export interface WorkerBodyRules {
  parseJson: (text: string) => unknown;
  /** The longest route parameter the server's router takes. */
  maxParamLength: number;
  log: FastifyBaseLogger;
}

/** A pooled worker is a process on this machine: the audit log files its refused calls as loopback's. */
const POOLED_WORKER_CLIENT = "127.0.0.1";

/**
 * Answers pooled workers' calls with the worker API's own routes and pipeline, without HTTP: the route
 * found by the same router Fastify uses, the body parsed and limited by the same rules, the answer held
 * until the writes made before it are committed, and a refusal filed in the audit log. The call stays
 * under `/internal/v1` whatever its path says, and only the headers a worker's client sends reach the
 * route. `signal` is the worker giving up on the call; a route that started long work stops with it.
 */
export function workerCallAnswerer(ctx: ApiContext, routes: readonly WorkerRoute[], rules: WorkerBodyRules): WorkerCallAnswerer {
  const router = workerRouter(routes, rules.maxParamLength);
  return async (call, signal) => {
    const url = new URL(`${WORKER_API_PREFIX}/${call.path}`, "http://worker.invalid");
    if (!url.pathname.startsWith(`${WORKER_API_PREFIX}/`)) return jsonAnswer(400, errorBody(400, "a worker call must stay under /internal/v1"));
    const method = String(call.method).toUpperCase();
    const request: WorkerRequest = {
      method,
      route: "",
      params: {},
      query: {},
      headers: Object.fromEntries(WORKER_HEADERS.flatMap((name) => (typeof call.headers[name] === "string" ? [[name, call.headers[name]]] : []))),
      body: undefined,
      gone: () => signal,
      log: rules.log,
    };
    let answer: WorkerAnswer;
    try {
      const found = router.find(method === "HEAD" ? "GET" : (method as FindMyWay.HTTPMethod), url.pathname.slice(WORKER_API_PREFIX.length) + url.search);
      // A path the router cannot read has a handler that throws Fastify's error for it, and no route.
      if (found && !found.store) found.handler(undefined as never, undefined as never, {}, undefined, {});
      const route = found?.store as WorkerRoute | undefined;
      if (route) Object.assign(request, { route: WORKER_API_PREFIX + route.url, params: found!.params, query: found!.searchParams });
      answer = route ? await answerRoutedCall(ctx, route, request, call, rules) : jsonAnswer(404, errorBody(404, `no route for ${method} ${url.pathname}`));
    } catch (error) {
      answer = errorAnswer(ctx, request, error as Error);
    }
    await new Promise<void>((resolve) => ctx.gate.release(resolve));
    auditPooledRefusal(ctx, request, url.pathname, answer);
    return { status: answer.status, text: method === "HEAD" ? "" : answer.text };
  };
}

/** The only headers a worker's client sends, as text; nothing else of a call reaches the routes. */
const WORKER_HEADERS = ["authorization", "content-type", "idempotency-key"] as const;

/** Fastify's router over the worker routes, with HEAD answered as GET, and a path it cannot read refused as Fastify refuses it. */
function workerRouter(routes: readonly WorkerRoute[], maxParamLength: number) {
  const router = FindMyWay({
    maxParamLength,
    onBadUrl: (path) => {
      throw new errorCodes.FST_ERR_BAD_URL(path);
    },
    onMaxParamLength: (path) => {
      throw new errorCodes.FST_ERR_MAX_PARAM_LENGTH(path);
    },
  });
  for (const route of routes) router.on(route.method, route.url, () => undefined, route);
  return router;
}

/** A refusal filed in the audit log as the HTTP surface files it; a log that cannot be written does not change the answer. */
function auditPooledRefusal(ctx: ApiContext, request: WorkerRequest, path: string, answer: WorkerAnswer): void {
  try {
    auditRefusal(ctx, { method: request.method, url: path, refusal: answer.refusal, query: request.query, body: request.body }, { status: answer.status, route: request.route || undefined, client: POOLED_WORKER_CLIENT });
  } catch (error) {
    ctx.noteFailure(error);
    request.log.error({ err: error }, "a refused worker call could not be audited");
  }
}

async function answerRoutedCall(ctx: ApiContext, route: WorkerRoute, request: WorkerRequest, call: WorkerCall, rules: WorkerBodyRules): Promise<WorkerAnswer> {
  try {
    await refuseRepeatedQuery(request);
    request.body = bodyOf(call, request, route.bodyLimit ?? MAX_REQUEST_BODY_BYTES, rules);
  } catch (error) {
    return errorAnswer(ctx, request, error as Error);
  }
  return answerWorkerRequest(ctx, route, request);
}

/** The body as an HTTP request's parsers make it: JSON parsed, a raw result or artifact as bytes, nothing for an empty body or a GET. */
function bodyOf(call: WorkerCall, request: WorkerRequest, limit: number, rules: WorkerBodyRules): unknown {
  const { body } = call;
  if (request.method === "GET" || request.method === "HEAD" || body === undefined) return undefined;
  if (typeof body !== "string" && !(body instanceof Uint8Array)) throw new OrkaError("invalid_argument", "a worker call's body must be text or bytes");
  const size = typeof body === "string" ? Buffer.byteLength(body) : body.byteLength;
  if (size > limit) throw new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE();
  const contentType = request.headers["content-type"];
  if (contentType === undefined && size === 0) return undefined;
  const bytes = () => (typeof body === "string" ? Buffer.from(body) : Buffer.from(body.buffer, body.byteOffset, body.byteLength));
  switch (contentType?.split(";")[0].trim().toLowerCase()) {
    case "application/json":
      return rules.parseJson(typeof body === "string" ? body : bytes().toString("utf8"));
    case "text/plain":
    case "application/octet-stream":
      return bytes();
    default:
      throw new errorCodes.FST_ERR_CTP_INVALID_MEDIA_TYPE(contentType);
  }
}
