import { parse as parseQuery } from "node:querystring";
import FindMyWay from "find-my-way";
import { errorCodes, type FastifyBaseLogger } from "fastify";
import type { ApiContext } from "../context.ts";
import { errorBody } from "../errors.ts";
import { auditRefusal } from "../refusals.ts";
import { refuseRepeatedQuery } from "../request-input.ts";
import { answerWorkerRequest, errorAnswer } from "./worker-pipeline.ts";
import { jsonAnswer, MAX_WORKER_BODY_BYTES, WORKER_API_PREFIX, type WorkerAnswer, type WorkerRequest, type WorkerRoute } from "./worker-route.ts";

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
  const router = FindMyWay({ maxParamLength: rules.maxParamLength });
  for (const route of routes) router.on(route.method, route.url, () => undefined, route);
  return async (call, signal) => {
    const url = new URL(`${WORKER_API_PREFIX}/${call.path}`, "http://worker.invalid");
    if (!url.pathname.startsWith(`${WORKER_API_PREFIX}/`)) return jsonAnswer(400, errorBody(400, "a worker call must stay under /internal/v1"));
    const found = router.find(call.method as FindMyWay.HTTPMethod, url.pathname.slice(WORKER_API_PREFIX.length));
    const route = found?.store as WorkerRoute | undefined;
    const request: WorkerRequest = {
      method: call.method,
      route: route ? WORKER_API_PREFIX + route.url : "",
      params: (found?.params ?? {}) as Record<string, string>,
      query: parseQuery(url.search.slice(1)) as Record<string, string>,
      headers: { authorization: call.headers.authorization, "idempotency-key": call.headers["idempotency-key"], "content-type": call.headers["content-type"] },
      body: undefined,
      gone: () => signal,
      log: rules.log,
    };
    const answer = route ? await answerRoutedCall(ctx, route, request, call, rules) : jsonAnswer(404, errorBody(404, `no route for ${call.method} ${url.pathname}`));
    await new Promise<void>((resolve) => ctx.gate.release(resolve));
    auditRefusal(ctx, { method: call.method, url: url.pathname, refusal: answer.refusal, query: request.query, body: request.body }, { status: answer.status, route: request.route || undefined, client: POOLED_WORKER_CLIENT });
    return { status: answer.status, text: answer.text };
  };
}

async function answerRoutedCall(ctx: ApiContext, route: WorkerRoute, request: WorkerRequest, call: WorkerCall, rules: WorkerBodyRules): Promise<WorkerAnswer> {
  try {
    await refuseRepeatedQuery(request);
    request.body = bodyOf(call, route.bodyLimit ?? MAX_WORKER_BODY_BYTES, rules);
  } catch (error) {
    return errorAnswer(ctx, request, error as Error);
  }
  return answerWorkerRequest(ctx, route, request);
}

/** The body as an HTTP request's parsers make it: JSON parsed, a raw result or artifact as bytes, nothing for an empty body. */
function bodyOf(call: WorkerCall, limit: number, rules: WorkerBodyRules): unknown {
  const { body } = call;
  const size = body === undefined ? 0 : typeof body === "string" ? Buffer.byteLength(body) : body.byteLength;
  if (size > limit) throw new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE();
  const contentType = call.headers["content-type"];
  if (contentType === undefined && size === 0) return undefined;
  const bytes = () => (typeof body === "string" ? Buffer.from(body) : body ? Buffer.from(body.buffer, body.byteOffset, body.byteLength) : Buffer.alloc(0));
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
