import type { ExecutionEventInput } from "../store/data-store.ts";
import type { CallOptions, ControlPlane } from "../tools/define.ts";
import { errorCodeOfStatus, OrkaError } from "../util/errors.ts";
import type { CarriedJournal, JournalledCall } from "./tool-call.ts";
import type { ControlPlaneReply, ControlPlaneTransport } from "./transport.ts";

interface ClientOptions {
  transport: ControlPlaneTransport;
  token: string;
  namespace: string;
  task: string;
  idempotencyKey?: string;
}

/** The worker's only way to the control plane: /internal/v1 with the attempt's bearer token, over its transport. */
export class ControlPlaneClient implements ControlPlane {
  private readonly options: ClientOptions;

  constructor(options: ClientOptions) {
    this.options = options;
  }

  postResult(result: string): Promise<unknown> {
    return this.send("POST", `results/${this.taskPath()}`, result, "text/plain; charset=utf-8");
  }

  /** Execution events, in order, in one call. */
  postEvents(events: ExecutionEventInput[]): Promise<unknown> {
    return this.send("POST", `events/${this.options.namespace}/task/${this.options.task}`, JSON.stringify(events), "application/json");
  }

  uploadArtifact(file: string, content: Buffer): Promise<unknown> {
    return this.send("POST", `artifacts/${this.taskPath()}/${encodeURIComponent(file)}`, content, "application/octet-stream");
  }

  /**
   * Runs a custom Tool on the server, which rechecks that this attempt may call it. `parked` means the call
   * waits for a person's approval: the iteration must end. A call with a journal carries it: the steps it
   * acts on that are not written yet, which the server writes in the commit that starts the call, and the
   * place of its result step, which the server journals with the reply it records (both need the key).
   */
  async callTool(name: string, args: Record<string, unknown>, key?: string, journal?: JournalledCall): Promise<{ result: string; parked?: boolean }> {
    const client = key ? this.withIdempotencyKey(key) : this;
    const path = `tools/${this.taskPath()}/${encodeURIComponent(name)}`;
    const send = (carried?: CarriedJournal) => client.send("POST", path, JSON.stringify({ arguments: args, ...carried }), "application/json") as Promise<{ result: string; parked?: boolean; journalled?: boolean }>;
    // A journalled call never goes without its journal: the answer it acts on must be written first.
    const answer = journal ? await journal.send(send) : await send();
    if (answer.journalled) journal?.journalled(answer.result);
    return { result: answer.result, ...(answer.parked ? { parked: true } : {}) };
  }

  /** GET under /internal/v1, answering parsed JSON. */
  get(path: string, query: Record<string, string | undefined> = {}): Promise<unknown> {
    return this.send("GET", withQuery(path, query));
  }

  delete(path: string, query: Record<string, string | undefined> = {}): Promise<unknown> {
    return this.send("DELETE", withQuery(path, query));
  }

  post(path: string, body: unknown, options?: CallOptions): Promise<unknown> {
    return this.send("POST", path, JSON.stringify(body), "application/json", options);
  }

  /** `<namespace>/<task>`, the tail of this attempt's per-Task paths. */
  taskPath(): string {
    return `${this.options.namespace}/${this.options.task}`;
  }

  /** The same client, sending an idempotency key: the control plane answers a repeated call from its ledger. */
  withIdempotencyKey(key: string): ControlPlaneClient {
    return new ControlPlaneClient({ ...this.options, idempotencyKey: key });
  }

  private async send(method: string, path: string, body?: string | Buffer, contentType?: string, options: CallOptions = {}): Promise<unknown> {
    const timeoutMs = options.timeoutMs ?? this.options.transport.timeoutMs;
    let reply: ControlPlaneReply;
    try {
      const headers = {
        authorization: `Bearer ${this.options.token}`,
        ...(contentType ? { "content-type": contentType } : {}),
        ...(this.options.idempotencyKey ? { "idempotency-key": this.options.idempotencyKey } : {}),
      };
      reply = await this.options.transport.send({ method, path, headers, body }, { timeoutMs, signal: options.signal });
    } catch (err) {
      // An abort's DOMException has a read-only message; the caller gets an error it can report.
      if (options.signal?.aborted) throw new OrkaError("deadline_exceeded", "the call was cancelled before the control plane answered");
      if (err instanceof Error && err.name === "TimeoutError") throw new OrkaError("deadline_exceeded", `the control plane did not answer within ${timeoutMs / 1000}s`);
      throw err;
    }
    const { status, text } = reply;
    if (status < 200 || status > 299) {
      let message = text;
      try {
        message = JSON.parse(text).error?.message ?? text;
      } catch {
        // not JSON: keep the text
      }
      throw new OrkaError(errorCodeOfStatus(status), message || `control plane answered HTTP ${status}`);
    }
    return text ? JSON.parse(text) : undefined;
  }
}

/** The path with the query's set, non-empty entries. */
function withQuery(path: string, query: Record<string, string | undefined>): string {
  const search = new URLSearchParams(Object.entries(query).filter((e): e is [string, string] => e[1] !== undefined && e[1] !== ""));
  return `${path}${search.size ? `?${search}` : ""}`;
}
