import { Readable } from "node:stream";
import { Agent, fetch, interceptors, request, type Dispatcher } from "undici";

/** Room left so that Orka's own deadline, not the transport's, ends a silent call. */
const TRANSPORT_SLACK_MS = 5_000;

/** As many redirects as fetch follows. */
const MAX_REDIRECTS = 20;

/**
 * Options for a vendor SDK client so that only the call's deadline ends it: Node's built-in fetch
 * gives up after 300 s without headers or body bytes, and the SDKs after 10 minutes, whatever
 * deadline a Provider sets. The SDK gets a fetch on undici with a dispatcher whose limits lie just
 * past the deadline, and its own clock later still, so that a cut the transport makes carries
 * undici's error code and is retried as a dropped connection.
 */
export function sdkTransport(timeoutMs: number) {
  const limitMs = timeoutMs + TRANSPORT_SLACK_MS;
  return { timeout: limitMs + TRANSPORT_SLACK_MS, fetch: requestFetch(dispatchersWithin(limitMs)) };
}

interface Dispatchers {
  /** For undici's fetch, which follows redirects itself. */
  plain: Agent;
  /** For `request`: follows redirects as fetch does, and decodes a compressed body. */
  following: Dispatcher;
}

const dispatchers = new Map<number, Dispatchers>();

/** One pool of kept-alive connections per limit, shared by the clients of every attempt a worker process runs. */
function dispatchersWithin(limitMs: number): Dispatchers {
  let found = dispatchers.get(limitMs);
  if (!found) {
    const plain = new Agent({ headersTimeout: limitMs, bodyTimeout: limitMs });
    // Like fetch: too many redirects is a failure, and an error's body is decoded too (the provider's message is in it).
    const redirects = interceptors.redirect({ maxRedirections: MAX_REDIRECTS, throwOnMaxRedirect: true });
    found = { plain, following: plain.compose(redirects, interceptors.decompress({ skipErrorResponses: false })) };
    dispatchers.set(limitMs, found);
  }
  return found;
}

/** The key under which a call's signal rides to the transport in the options an SDK hands its fetch. */
const CALL_SIGNAL: unique symbol = Symbol("call signal");

/** Where a request's options may carry its call's signal. */
type CarriesCallSignal = { [CALL_SIGNAL]?: AbortSignal };

/** Request options for an SDK call, which the SDK hands its fetch as they are. Typed empty: the SDKs' own types know no key of the transport's. */
export interface SdkCallOptions {
  fetchOptions?: Record<never, never>;
}

/**
 * Runs `call`, a call of an SDK client built with `sdkTransport` made with the options it is given, so that
 * its requests end when `signal` aborts, and fails with the signal's reason when it has. The SDK itself is not given the
 * signal: the OpenAI SDK would compose it with its own through `AbortSignal.any` and the Anthropic SDK
 * register a finalizer for it, on every call, which leaves the garbage collector weak references to trace
 * (docs/performance.md). The signal goes in the request's `fetchOptions`, which both SDKs hand their fetch,
 * and the transport ends the request with it in place of the SDK's own: the SDK's timeout no longer ends
 * the request, so `signal` must carry the call's deadline (a model call's does, through `withRetries`); the
 * dispatcher's header and idle-body timeouts still apply.
 */
export async function abortableSdkCall<T>(signal: AbortSignal | undefined, call: (options: SdkCallOptions) => Promise<T>): Promise<T> {
  if (!signal) return call({});
  try {
    const fetchOptions: CarriesCallSignal = { [CALL_SIGNAL]: signal };
    return await call({ fetchOptions });
  } catch (err) {
    if (signal.aborted) throw signal.reason;
    throw err;
  }
}

/** Statuses whose response has no body: a Response made with one would be refused. */
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);

type FetchInput = Parameters<typeof fetch>[0];
type FetchInit = NonNullable<Parameters<typeof fetch>[1]>;

/**
 * fetch for the SDKs on undici's `request`: a request costs about a third of the CPU it costs through
 * undici's fetch (docs/performance-history.md). The SDKs send a URL and a text body; anything else (a Request, a
 * streamed or form body, a redirect mode of its own) goes through undici's fetch. It fails as fetch
 * does: with the signal's reason when aborted, else with a TypeError whose cause is undici's error.
 */
function requestFetch({ plain, following }: Dispatchers): typeof globalThis.fetch {
  const viaFetch = (input: FetchInput, init: FetchInit, signal: AbortSignal | null | undefined) => fetch(input, { ...init, signal, dispatcher: plain });
  const call = async (input: FetchInput, init: FetchInit = {}) => {
    const { body, redirect } = init;
    const signal = (init as CarriesCallSignal)[CALL_SIGNAL] ?? init.signal;
    const textBody = body === undefined || body === null || typeof body === "string" || body instanceof Uint8Array;
    if (!(typeof input === "string" || input instanceof URL) || !textBody || (redirect !== undefined && redirect !== "follow")) return viaFetch(input, init, signal);
    signal?.throwIfAborted();
    let response: Dispatcher.ResponseData | undefined;
    try {
      response = await request(input, {
        method: (init.method ?? "GET") as Dispatcher.HttpMethod,
        headers: init.headers as Dispatcher.RequestOptions["headers"],
        body,
        signal: signal ?? undefined,
        dispatcher: following,
      });
      const withoutBody = NULL_BODY_STATUSES.has(response.statusCode);
      if (withoutBody) await response.body.dump();
      return new Response(withoutBody ? null : (Readable.toWeb(response.body) as ReadableStream<Uint8Array>), {
        status: response.statusCode,
        statusText: response.statusText,
        headers: headerPairs(response.headers),
      });
    } catch (err) {
      // A reply no Response can hold (a status past 599) would keep its connection until the body deadline.
      response?.body.destroy();
      if (signal?.aborted) throw signal.reason;
      throw new TypeError("fetch failed", { cause: err });
    }
  };
  return call as unknown as typeof globalThis.fetch;
}

/** undici's response headers (a header sent several times is a list) as the pairs a Response takes. */
function headerPairs(headers: Record<string, string | string[] | undefined>): [string, string][] {
  return Object.entries(headers).flatMap(([name, value]) => (value === undefined ? [] : [value].flat().map((one): [string, string] => [name, one])));
}
