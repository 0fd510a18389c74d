import { randomUUID } from "node:crypto";
import type { FastifyInstance, FastifyReply, FastifyRequest, InjectOptions } from "fastify";

/** A pooled worker's request to the worker API, as it arrives over the pool's IPC channel. */
export interface WorkerCall {
  method: string;
  /** Under `/internal/v1`, with its query. */
  path: string;
  headers: Record<string, string>;
  /** Bytes arrive over IPC as a Uint8Array. */
  body?: string | Uint8Array;
}

/** The only headers a worker's control-plane client sends; nothing else of a call reaches the routes. */
const WORKER_HEADERS = ["authorization", "content-type", "idempotency-key"];

/** Names the cancellation of a call answered here; set by this module only (a worker's own headers never pass). */
const CALL_HEADER = "orka-worker-call";
const cancellations = new Map<string, AbortSignal>();

const refusal = (message: string) => ({ status: 400, text: JSON.stringify({ error: { code: 400, message } }) });

/**
 * Answers a pooled worker's call through the worker API's own routes (`inject`: every hook and check of
 * an HTTP request, no socket). The call stays under `/internal/v1` whatever its path says, carries no
 * header that could speak for another client (`x-forwarded-for`, `host`), and is cancelled with `signal`
 * (a route that started work for it learns of that through `callerGone`).
 */
export async function answerWorkerCall(app: FastifyInstance, call: WorkerCall, signal: AbortSignal): Promise<{ status: number; text: string }> {
  const url = new URL(`/internal/v1/${call.path}`, "http://worker.invalid");
  if (!url.pathname.startsWith("/internal/v1/")) return refusal("a worker call must stay under /internal/v1");
  const token = randomUUID();
  const headers = { ...Object.fromEntries(WORKER_HEADERS.flatMap((name) => (call.headers[name] === undefined ? [] : [[name, call.headers[name]]]))), [CALL_HEADER]: token };
  const { body } = call;
  const payload = body instanceof Uint8Array ? Buffer.from(body.buffer, body.byteOffset, body.byteLength) : body;
  cancellations.set(token, signal);
  try {
    // The signal is not handed to inject: a request destroyed half-way through fastify's reply crashed the
    // server (an uncaught error in its error handler). The route stops its work through `callerGone`, and
    // the answer of a cancelled call goes nowhere.
    const response = await app.inject({ method: call.method as InjectOptions["method"], url: url.pathname + url.search, headers, payload });
    return { status: response.statusCode, text: response.body };
  } finally {
    cancellations.delete(token);
  }
}

/**
 * Aborted when the caller of a worker API request is gone: the worker gave up on a call it sent over the
 * pool's channel (or its process ended), or an HTTP caller's connection closed. A route that starts
 * long work on a worker's behalf stops it with this.
 */
export function callerGone(request: FastifyRequest, reply: FastifyReply): AbortSignal {
  const token = request.headers[CALL_HEADER];
  const cancelled = typeof token === "string" ? cancellations.get(token) : undefined;
  if (cancelled) return cancelled;
  const gone = new AbortController();
  if (reply.raw.destroyed || request.raw.socket?.destroyed) gone.abort();
  else reply.raw.on("close", () => gone.abort());
  return gone.signal;
}
