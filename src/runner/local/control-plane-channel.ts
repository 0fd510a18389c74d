import { OrkaError } from "../../util/errors.ts";
import { withCallSignal } from "../../util/call-signal.ts";
import type { ControlPlaneReply, ControlPlaneRequest, ControlPlaneTransport } from "../../worker/transport.ts";
import type { FromWorker, ToWorker } from "./messages.ts";

/**
 * A request over the channel is not lost while the runner lives (it would disconnect): an answer that
 * is late only means the control plane is busy, so a call waits long before it is given up, and a
 * burst of work slows attempts down instead of failing them.
 */
const CHANNEL_TIMEOUT_MS = 120_000;

/**
 * How long a stopped attempt's calls may still wait (its last events, say): well inside the time the
 * pool gives an attempt to let go before it kills the whole worker process.
 */
const STOPPING_CALL_MS = 5_000;

/**
 * A worker process's way to the control plane: each request goes to the runner over the pool's IPC
 * channel and is answered there by the same routes, with the same checks, as over HTTP. A call given up
 * on (its deadline, its attempt stopped) is cancelled at the runner too, so what it started there stops.
 */
export class ControlPlaneChannel {
  private nextId = 1;
  private readonly waiting = new Map<number, { resolve: (reply: ControlPlaneReply) => void; reject: (err: unknown) => void }>();
  /** Per attempt: aborted some time after the attempt was told to stop. */
  private readonly stopped = new Map<string, AbortController>();
  private readonly send: (message: FromWorker) => boolean;

  constructor(send: (message: FromWorker) => boolean) {
    this.send = send;
  }

  /** The transport of one attempt's calls. */
  transportFor(attemptId: string): ControlPlaneTransport {
    const stopped = new AbortController();
    this.stopped.set(attemptId, stopped);
    return {
      timeoutMs: CHANNEL_TIMEOUT_MS,
      send: (request, signal) => withCallSignal({ parents: [signal, stopped.signal] }, (callSignal) => this.call(request, callSignal)),
    };
  }

  /** The attempt was told to stop: its calls, waiting or to come, get a few seconds more at most. */
  stopping(attemptId: string): void {
    const stopped = this.stopped.get(attemptId);
    const reason = () => new OrkaError("unavailable", `the attempt was stopped and the control plane did not answer within ${STOPPING_CALL_MS / 1000}s`);
    if (stopped) setTimeout(() => stopped.abort(reason()), STOPPING_CALL_MS).unref();
  }

  /** The attempt ended. */
  forget(attemptId: string): void {
    this.stopped.delete(attemptId);
  }

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
        this.send({ type: "cancel", id });
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
