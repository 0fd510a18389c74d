import type { FastifyBaseLogger } from "fastify";
import type { StepInput, StepOwner } from "../../store/journal-store.ts";
import type { JournalWrite } from "./journal-write.ts";

/** The mount of the worker API: every route's path is under it. */
export const WORKER_API_PREFIX = "/internal/v1";

/** A call of the worker API as its route sees it, whether it came over HTTP or over the pool's IPC channel. */
export interface WorkerRequest {
  method: string;
  /** The route's path pattern under the mount (`/internal/v1/tools/:ns/:task/:name`), as grants and the ledger name it. */
  route: string;
  params: Record<string, string>;
  /** Each parameter given once (a repeated one is refused before any route runs). */
  query: Record<string, string>;
  headers: { authorization?: string; "idempotency-key"?: string; "content-type"?: string };
  /** Parsed JSON, the raw bytes of a result or artifact, or undefined when nothing was sent. */
  body: unknown;
  /** Aborted when the caller is gone: the worker gave up on the call (or its process ended), or an HTTP caller's connection closed. */
  gone: () => AbortSignal;
  log: FastifyBaseLogger;
  /** The effect-ledger key of a worker's tool call, scoped to its Task, once the ledger recorded the call as started. */
  effectKey?: string;
  /** The journal step a route asks to be written with the call's recorded reply, in the same commit. */
  resultStep?: { owner: StepOwner; step: StepInput };
}

/** One route of the worker API, served alike over HTTP (a Job's worker) and over IPC (a pooled worker). */
export interface WorkerRoute {
  method: "GET" | "POST" | "DELETE";
  /** Under the mount, with `:name` parameters. */
  url: string;
  /** Bytes a body may have; 12 MiB when unset. */
  bodyLimit?: number;
  /** Runs first, on the body as sent: a call refused here reaches neither the scrub nor the effect ledger. */
  check?: (request: WorkerRequest) => void;
  /** A route's last check of a new keyed call, before the ledger records it as started (a refusal leaves no record of the call). */
  beforeEffect?: (request: WorkerRequest) => void;
  /** Journal steps a new keyed call carries (scrubbed by then, as every body a worker sends), written in the commit that records it as started. */
  journalFirst?: (request: WorkerRequest) => JournalWrite | undefined;
  /** The answer: a JSON value (200), or a `WorkerReply` with another status. */
  handle: (request: WorkerRequest) => unknown;
}

/** An answer with a status of its own; `body` undefined sends nothing. */
export class WorkerReply {
  readonly status: number;
  readonly body: unknown;

  constructor(status: number, body?: unknown) {
    this.status = status;
    this.body = body;
  }
}

export const created = (body: unknown) => new WorkerReply(201, body);
export const noContent = () => new WorkerReply(204);

/** What a worker API call answers, serialized, before it leaves by either way. */
export interface WorkerAnswer {
  status: number;
  /** The body's media type; none for an empty body. */
  type?: string;
  text: string;
  /** Answered from the effect ledger's record of an earlier call with the same key. */
  replayed?: boolean;
  /** Why the caller was refused (401, 403), for the audit log. */
  refusal?: string;
}

const JSON_TYPE = "application/json; charset=utf-8";

/** A JSON answer; `body` undefined answers nothing. */
export function jsonAnswer(status: number, body: unknown): WorkerAnswer {
  return body === undefined ? { status, text: "" } : { status, type: JSON_TYPE, text: JSON.stringify(body) };
}
