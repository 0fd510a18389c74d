import { OrkaError } from "../../util/errors.ts";
import type { ControlPlaneReply, ControlPlaneRequest, ControlPlaneTransport } from "../../worker/transport.ts";
import type { FromWorker, ToWorker } from "./messages.ts";

/**
 * A request over the channel is not lost while the runner lives (it would disconnect): an answer that
 * is late only means the control plane is busy, so a call waits long before it is given up, and a
 * burst of work slows attempts down instead of failing them.
 */
const CHANNEL_TIMEOUT_MS = 120_000;

/**
 * A worker process's way to the control plane: each request goes to the runner over the pool's IPC
 * channel and is answered there by the same routes, with the same checks, as over HTTP.
 */
export class ControlPlaneChannel {
  private nextId = 1;
  private readonly waiting = new Map<number, { resolve: (reply: ControlPlaneReply) => void; reject: (err: unknown) => void }>();
  private readonly send: (message: FromWorker) => boolean;

  constructor(send: (message: FromWorker) => boolean) {
    this.send = send;
  }

  readonly transport: ControlPlaneTransport = {
    timeoutMs: CHANNEL_TIMEOUT_MS,
    send: (request, signal) => this.call(request, signal),
  };

  private call(request: ControlPlaneRequest, signal: AbortSignal): Promise<ControlPlaneReply> {
    return new Promise((resolve, reject) => {
      if (signal.aborted) return reject(signal.reason);
      const id = this.nextId++;
      const settle = () => {
        this.waiting.delete(id);
        signal.removeEventListener("abort", abort);
      };
      const abort = () => {
        settle();
        reject(signal.reason);
      };
      signal.addEventListener("abort", abort, { once: true });
      this.waiting.set(id, { resolve: (reply) => (settle(), resolve(reply)), reject: (err) => (settle(), reject(err)) });
      if (!this.send({ type: "call", id, ...request })) this.waiting.get(id)?.reject(new OrkaError("unavailable", "the runner is not reachable"));
    });
  }

  /** A reply from the runner; one for a request given up on (timed out, aborted) is dropped. */
  answer(message: Extract<ToWorker, { type: "reply" }>): void {
    this.waiting.get(message.id)?.resolve({ status: message.status, text: message.text });
  }

  /** The runner went away: nothing waiting will be answered. */
  close(reason: string): void {
    for (const { reject } of [...this.waiting.values()]) reject(new OrkaError("unavailable", reason));
  }
}
