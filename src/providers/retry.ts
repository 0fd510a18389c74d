import type { ModelClient, ModelRequest, ModelResponse } from "./model.ts";
import { ModelApiError } from "./model.ts";

const MAX_RETRIES = 3;
const MAX_DELAY_MS = 30_000;

export interface RetryOptions {
  /** First backoff step; doubles per retry, with full jitter, capped at 30 s. */
  baseDelayMs: number;
  onRetry?: (attempt: number, error: ModelApiError, delayMs: number) => void;
}

/** Retries what the provider may answer next time (429/500/502/503/529, unusable bodies, silence) three times with jittered exponential backoff (spec P3.1). */
export function withRetries(client: ModelClient, options: RetryOptions): ModelClient {
  return {
    provider: client.provider,
    async complete(request: ModelRequest): Promise<ModelResponse> {
      for (let attempt = 0; ; attempt++) {
        try {
          return await client.complete(request);
        } catch (err) {
          if (!(err instanceof ModelApiError) || !err.retryable || attempt >= MAX_RETRIES) throw err;
          const backoff = Math.min(MAX_DELAY_MS, options.baseDelayMs * 2 ** attempt);
          const delayMs = Math.min(MAX_DELAY_MS, err.retryAfterMs ?? Math.round(backoff / 2 + Math.random() * (backoff / 2)));
          options.onRetry?.(attempt + 1, err, delayMs);
          await sleep(delayMs, request.signal);
        }
      }
    },
  };
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener("abort", () => {
      clearTimeout(timer);
      reject(signal.reason);
    }, { once: true });
  });
}

/**
 * Gives each call `timeoutMs` to answer, whether or not the vendor client honours the abort: a
 * provider that stays silent is a provider error like a 503, retried and then left for a fallback.
 */
export function withDeadline(client: ModelClient, timeoutMs: number): ModelClient {
  return {
    provider: client.provider,
    complete(request: ModelRequest): Promise<ModelResponse> {
      const deadline = AbortSignal.timeout(timeoutMs);
      const signal = request.signal ? AbortSignal.any([request.signal, deadline]) : deadline;
      const silence = new Promise<never>((_resolve, reject) => {
        deadline.addEventListener("abort", () => reject(new ModelApiError(`provider did not answer within ${timeoutMs} ms`, undefined, { retryable: true })), { once: true });
      });
      return Promise.race([client.complete({ ...request, signal }), silence]);
    },
  };
}
