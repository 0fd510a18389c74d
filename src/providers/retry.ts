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
    complete: (request: ModelRequest): Promise<ModelResponse> => withCallSignal({ timeoutMs: budgetMs }, async (budget) => {
      const started = Date.now();
      for (let attempt = 0; ; attempt++) {
        try {
          return await tryWithinDeadline(client, request, { timeoutMs: options.timeoutMs, budget, budgetMs });
        } catch (err) {
          if (!(err instanceof ModelApiError) || !err.retryable || attempt >= MAX_RETRIES || budget.aborted || request.signal?.aborted) throw err;
          const backoff = Math.min(MAX_DELAY_MS, options.baseDelayMs * 2 ** attempt);
          const delayMs = Math.min(MAX_DELAY_MS, err.retryAfterMs ?? Math.round(backoff / 2 + Math.random() * (backoff / 2)));
          if (delayMs >= budgetMs - (Date.now() - started)) throw err;
          options.onRetry?.(attempt + 1, err, delayMs);
          await withCallSignal({ parents: [request.signal, budget] }, (signal) => sleep(delayMs, signal)).catch((reason) => {
            throw budget.aborted && !request.signal?.aborted ? err : reason;
          });
        }
      }
    }),
  };
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => {
      clearTimeout(timer);
      reject(signal.reason);
    }, { once: true });
  });
}

/**
 * One try, given `timeoutMs` (and no more than the call's budget leaves) to answer, whether or not
 * the vendor client honours the abort: a provider that stays silent is a provider error like a 503.
 */
function tryWithinDeadline(client: ModelClient, request: ModelRequest, limits: { timeoutMs: number; budget: AbortSignal; budgetMs: number }): Promise<ModelResponse> {
  return withCallSignal({ timeoutMs: limits.timeoutMs, parents: [limits.budget] }, (deadline) => {
    // Listening before the client's signal is made: at the deadline this rejects first, so a client that
    // fails at once on its abort still reads as a provider that stayed silent, which is retried.
    const silence = new Promise<never>((_resolve, reject) => {
      deadline.addEventListener("abort", () => {
        const within = limits.budget.aborted ? `${limits.budgetMs} ms, the budget of the call and its retries` : `${limits.timeoutMs} ms`;
        reject(new ModelApiError(`provider did not answer within ${within}`, undefined, { retryable: true, code: "deadline_exceeded" }));
      }, { once: true });
    });
    return withCallSignal({ parents: [request.signal, deadline] }, (signal) => Promise.race([client.complete({ ...request, signal }), silence]));
  });
}
