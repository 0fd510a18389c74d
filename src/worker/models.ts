import { createModelClient, type ModelEndpoint } from "../providers/index.ts";
import type { ModelClient, ModelRequest, ModelResponse } from "../providers/model.ts";
import { ModelApiError } from "../providers/model.ts";
import { withRetries } from "../providers/retry.ts";
import { errorMessage } from "../util/errors.ts";

/**
 * The primary model, then each fallback in order (spec P3.1). Each endpoint keeps its own model
 * name and retry budget; a context-length error is the loop's to handle, so it never falls back.
 */
export function modelWithFallbacks(
  endpoints: ModelEndpoint[],
  options: { retryBaseMs: number; onNotice: (message: string) => void },
): ModelClient {
  const routes = endpoints.map((endpoint) => ({
    endpoint,
    client: withRetries(lazyClient(endpoint), {
      baseDelayMs: options.retryBaseMs,
      onRetry: (n, err, delay) => options.onNotice(`${endpoint.name}: HTTP ${err.status}, retry ${n} in ${delay} ms`),
    }),
  }));
  return {
    provider: endpoints[0].type,
    async complete(request: ModelRequest): Promise<ModelResponse> {
      let lastError: unknown;
      for (const [index, route] of routes.entries()) {
        try {
          return await route.client.complete({ ...request, model: route.endpoint.model });
        } catch (err) {
          if (request.signal?.aborted || (err instanceof ModelApiError && err.contextTooLong)) throw err;
          lastError = err;
          if (index < routes.length - 1) options.onNotice(`${route.endpoint.name} failed (${errorMessage(err)}); trying fallback ${routes[index + 1].endpoint.name}`);
        }
      }
      throw lastError;
    },
  };
}

/** Builds the vendor client on first use, so a fallback with a missing key only fails if it is reached. */
function lazyClient(endpoint: ModelEndpoint): ModelClient {
  let client: ModelClient | undefined;
  return {
    provider: endpoint.type,
    complete: (request) => (client ??= createModelClient(endpoint)).complete(request),
  };
}
