import { Agent, fetch } from "undici";

/** Room left so that Orka's own deadline, not the transport's, ends a silent call. */
const TRANSPORT_SLACK_MS = 5_000;

/**
 * Options for a vendor SDK client so that only the call's deadline ends it: Node's built-in fetch
 * gives up after 300 s without headers or body bytes, and the SDKs after 10 minutes, whatever
 * deadline a Provider sets. The SDK gets undici's fetch with a dispatcher whose limits lie just past
 * the deadline, and its own clock later still, so that a cut the transport makes carries undici's
 * error code and is retried as a dropped connection.
 */
export function sdkTransport(timeoutMs: number) {
  const limitMs = timeoutMs + TRANSPORT_SLACK_MS;
  const dispatcher = dispatcherWithin(limitMs);
  const limitedFetch = (input: Parameters<typeof fetch>[0], init?: Parameters<typeof fetch>[1]) => fetch(input, { ...init, dispatcher });
  return { timeout: limitMs + TRANSPORT_SLACK_MS, fetch: limitedFetch as unknown as typeof globalThis.fetch };
}

const dispatchers = new Map<number, Agent>();

/** One pool of kept-alive connections per limit, shared by the clients of every attempt a worker process runs. */
function dispatcherWithin(limitMs: number): Agent {
  let dispatcher = dispatchers.get(limitMs);
  if (!dispatcher) {
    dispatcher = new Agent({ headersTimeout: limitMs, bodyTimeout: limitMs });
    dispatchers.set(limitMs, dispatcher);
  }
  return dispatcher;
}
