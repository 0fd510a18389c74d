import { createModelClient, type ModelEndpoint } from "./index.ts";
import { type ModelClient, type ModelRequest, type ModelResponse, ModelApiError, type ModelCallSettings } from "./model.ts";
import { clipText } from "../util/text.ts";
import { withRetries } from "./retry.ts";
import { errorMessage } from "../util/errors.ts";

const NOTICE_DETAIL_CHARS = 300;

/**
 * The primary model, then each fallback in order. Each endpoint keeps its own model
 * name, deadline and retry budget; a context-length error is the loop's to handle, so it never
 * falls back. When every endpoint fails, the error names the call, each provider and what it said.
 */
export function modelWithFallbacks(endpoints: ModelEndpoint[], options: ModelCallSettings & { onNotice: (message: string) => void }): ModelClient {
  const routes = endpoints.map((endpoint) => {
    const timeoutMs = endpoint.timeoutMs ?? options.timeoutMs;
    return {
      endpoint,
      client: withRetries(lazyClient(endpoint, timeoutMs), {
        baseDelayMs: options.retryBaseMs,
        timeoutMs,
        onRetry: (n, err, delay) => options.onNotice(`${endpoint.name}: ${clipText(err.message, NOTICE_DETAIL_CHARS)}, retry ${n} in ${delay} ms`),
      }),
    };
  });
  return {
    provider: endpoints[0].type,
    async complete(request: ModelRequest): Promise<ModelResponse> {
      const failures: { who: string; what: string }[] = [];
      let lastError: unknown;
      for (const [index, route] of routes.entries()) {
        try {
          return await route.client.complete({ ...request, model: route.endpoint.model });
        } catch (err) {
          if (request.signal?.aborted) throw err;
          lastError = err;
          failures.push({ who: `${route.endpoint.name} (${route.endpoint.type}, model ${route.endpoint.model})`, what: errorMessage(err) });
          if (err instanceof ModelApiError && err.contextTooLong) break;
          if (index < routes.length - 1) options.onNotice(`${route.endpoint.name} failed (${clipText(errorMessage(err), NOTICE_DETAIL_CHARS)}); trying fallback ${routes[index + 1].endpoint.name}`);
        }
      }
      throw callFailed(failures, lastError);
    },
  };
}

/** The error a Task fails with: the model call, then each provider tried and what it answered. */
function callFailed(failures: { who: string; what: string }[], last: unknown): ModelApiError {
  const message = failures.length === 1
    ? `model call to ${failures[0].who} failed: ${failures[0].what}`
    : `model call failed on every provider: ${failures.map((f) => `${f.who}: ${f.what}`).join("; then ")}`;
  return new ModelApiError(message, last instanceof ModelApiError ? last.status : undefined, { retryable: false });
}

/** Builds the vendor client on first use, so a fallback with a missing key only fails if it is reached. */
function lazyClient(endpoint: ModelEndpoint, timeoutMs: number): ModelClient {
  let client: ModelClient | undefined;
  return {
    provider: endpoint.type,
    complete: (request) => (client ??= createModelClient(endpoint, timeoutMs)).complete(request),
  };
}
