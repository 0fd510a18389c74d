import { setTimeout } from "node:timers/promises";
import { type ModelClient, type ModelRequest, type ModelResponse, ModelApiError } from "./model.ts";
import { withCallSignal } from "../util/call-signal.ts";

const MAX_RETRIES = 3;
const MAX_DELAY_MS = 30_000;
/** A call, its retries and the waits between them end within this many deadlines: four silent tries and their backoff fit, a long Retry-After does not. */
export const CALL_BUDGET_DEADLINES = 5;

export interface RetryOptions {
  /** First backoff step; doubles per retry, with full jitter, capped at 30 s. */
  baseDelayMs: number;
  /** How long one try may take. */
  timeoutMs: number;
  onRetry?: (attempt: number, error: ModelApiError, delayMs: number) => void;
}

/** The time limits of one model call and its retries. */
interface CallLimits {
  /** How long one try may take. */
  timeoutMs: number;
  /** How long the call, its retries and the waits between them may take. */
  budgetMs: number;
  /** When that budget is spent, on the monotonic clock (`performance.now()`): a step of the wall clock does not spend it. */
  budgetEndsAt: number;
}

/**
 * Gives each try `timeoutMs` to answer, and retries what the provider may answer next time (429,
 * 500, 502, 503, 529, unusable bodies, a dropped connection, silence) three times with jittered
 * exponential backoff, all within CALL_BUDGET_DEADLINES deadlines: a Retry-After the budget cannot
 * hold ends the call with the provider's own error at once instead of holding the Task's slot.
 */
export function withRetries(client: ModelClient, options: RetryOptions): ModelClient {
  const budgetMs = options.timeoutMs * CALL_BUDGET_DEADLINES;
  return {
    provider: client.provider,
    complete: async (request: ModelRequest): Promise<ModelResponse> => {
      const limits: CallLimits = { timeoutMs: options.timeoutMs, budgetMs, budgetEndsAt: performance.now() + budgetMs };
      for (let attempt = 0; ; attempt++) {
        try {
          return await tryWithinDeadline(client, request, limits);
        } catch (err) {
          const budgetLeftMs = limits.budgetEndsAt - performance.now();
          if (!(err instanceof ModelApiError) || !err.retryable || attempt >= MAX_RETRIES || budgetLeftMs <= 0 || request.signal?.aborted) throw err;
          const backoff = Math.min(MAX_DELAY_MS, options.baseDelayMs * 2 ** attempt);
          const delayMs = Math.min(MAX_DELAY_MS, err.retryAfterMs ?? Math.round(backoff / 2 + Math.random() * (backoff / 2)));
          if (delayMs >= budgetLeftMs) throw err;
          options.onRetry?.(attempt + 1, err, delayMs);
          await sleep(delayMs, request.signal);
        }
      }
    },
  };
}

/** Waits `ms`, or fails with the reason `signal` aborts with (node's own timer fails with an AbortError instead). */
function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return setTimeout(ms, undefined, { signal }).catch(() => {
    throw signal!.reason;
  });
}

/**
 * One try, given `timeoutMs` (and no more than the call's budget leaves) to answer, whether or not
 * the vendor client honours the abort: a provider that stays silent is a provider error like a 503,
 * and a call stopped by its caller fails with the caller's reason. One signal serves the try: thousands
 * of model calls wait at once in one worker process.
 */
function tryWithinDeadline(client: ModelClient, request: ModelRequest, limits: CallLimits): Promise<ModelResponse> {
  // An aborted signal sends no event: a try already stopped would otherwise wait on its client for ever.
  if (request.signal?.aborted) return Promise.reject(request.signal.reason);
  const budgetLeftMs = limits.budgetEndsAt - performance.now();
  const within = budgetLeftMs < limits.timeoutMs ? `${limits.budgetMs} ms, the budget of the call and its retries` : `${limits.timeoutMs} ms`;
  return withCallSignal({ timeoutMs: Math.min(limits.timeoutMs, budgetLeftMs), parents: [request.signal] }, (signal) => {
    // Listening before the client is given the signal: at the deadline this rejects first, so a client
    // that fails at once on its abort still reads as a provider that stayed silent, which is retried.
    const ended = new Promise<never>((_resolve, reject) => {
      signal.addEventListener("abort", () => {
        if (request.signal?.aborted) return reject(request.signal.reason);
        reject(new ModelApiError(`provider did not answer within ${within}`, undefined, { retryable: true, code: "deadline_exceeded" }));
      }, { once: true });
    });
    return Promise.race([client.complete({ ...request, signal }), ended]);
  });
}
