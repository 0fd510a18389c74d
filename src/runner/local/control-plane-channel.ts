import { OrkaError } from "../../util/errors.ts";
import { timeoutError } from "../../util/call-signal.ts";
import { setLongTimeout } from "../../util/timer.ts";
import type { ControlPlaneReply, ControlPlaneRequest, ControlPlaneTransport, ControlPlaneWait } from "../../worker/transport.ts";
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

/** One attempt's side of the channel: its calls waiting, and, once it was stopped and its few seconds are over, why its calls fail. */
interface AttemptCalls {
  waiting: Set<WaitingCall>;
  refused?: OrkaError;
}

/** A call waiting for its answer. */
interface WaitingCall {
  resolve: (reply: ControlPlaneReply) => void;
  /** Fails the call without telling the runner (it went away). */
  reject: (err: unknown) => void;
  /** Fails the call and tells the runner to stop what it started. */
  giveUp: (reason: unknown) => void;
}

/**
 * A worker process's way to the control plane: each request goes to the runner over the pool's IPC
 * channel and is answered there by the same routes, with the same checks, as over HTTP. A call given up
 * on (its deadline, its signal, its attempt stopped) is cancelled at the runner too, so what it started
 * there stops. A call costs a timer and, when it has a signal, one listener: thousands of attempts make
 * calls at once in one worker process.
 */
export class ControlPlaneChannel {
  private nextId = 1;
  private readonly waiting = new Map<number, WaitingCall>();
  private readonly attempts = new Map<string, AttemptCalls>();
  private readonly send: (message: FromWorker) => boolean;

  constructor(send: (message: FromWorker) => boolean) {
    this.send = send;
  }

  /** The transport of one attempt's calls. */
  transportFor(attemptId: string): ControlPlaneTransport {
    const attempt: AttemptCalls = { waiting: new Set() };
    this.attempts.set(attemptId, attempt);
    return { timeoutMs: CHANNEL_TIMEOUT_MS, send: (request, wait) => this.call(attempt, request, wait) };
  }

  /** The attempt was told to stop: its calls, waiting or to come, get a few seconds more at most. */
  stopping(attemptId: string): void {
    const attempt = this.attempts.get(attemptId);
    if (!attempt) return;
    setTimeout(() => {
      attempt.refused = new OrkaError("unavailable", `the attempt was stopped and the control plane did not answer within ${STOPPING_CALL_MS / 1000}s`);
      for (const call of [...attempt.waiting]) call.giveUp(attempt.refused);
    }, STOPPING_CALL_MS).unref();
  }

  /** The attempt ended. */
  forget(attemptId: string): void {
    this.attempts.delete(attemptId);
  }

  private call(attempt: AttemptCalls, request: ControlPlaneRequest, { timeoutMs, signal }: ControlPlaneWait): Promise<ControlPlaneReply> {
    return new Promise((resolve, reject) => {
      if (attempt.refused) return reject(attempt.refused);
      if (signal?.aborted) return reject(signal.reason);
      const id = this.nextId++;
      const settle = () => {
        this.waiting.delete(id);
        attempt.waiting.delete(call);
        timer.clear();
        signal?.removeEventListener("abort", onAbort);
      };
      const giveUp = (reason: unknown) => {
        settle();
        this.send({ type: "cancel", id });
        reject(reason);
      };
      const onAbort = () => giveUp(signal!.reason);
      const timer = setLongTimeout(() => giveUp(timeoutError()), timeoutMs);
      signal?.addEventListener("abort", onAbort, { once: true });
      const call: WaitingCall = { resolve: (reply) => (settle(), resolve(reply)), reject: (err) => (settle(), reject(err)), giveUp };
      this.waiting.set(id, call);
      attempt.waiting.add(call);
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
