/**
 * What shared SDK clients are made with in place of a key: each request sends its caller's own key, so no
 * client holds one (an SDK client requires a key to be made).
 */
export const KEY_SENT_PER_REQUEST = "set-per-request";

/** The most endpoints a worker process keeps an SDK client for; past that, the least recently made goes. */
const MAX_SHARED_CLIENTS = 64;
const sharedClients = new Map<string, unknown>();

/**
 * One SDK client per endpoint and deadline in a process (`endpoint` names both, and the SDK), shared by the
 * attempts that call it: making one costs 0.2–0.4 ms when the SDK's code is not hot, on the way to each
 * attempt's first model request. `make` gives the client KEY_SENT_PER_REQUEST as its key.
 */
export function sharedClient<Client>(endpoint: unknown[], make: () => Client): Client {
  const key = JSON.stringify(endpoint);
  let client = sharedClients.get(key) as Client | undefined;
  if (client !== undefined) return client;
  client = make();
  if (sharedClients.size >= MAX_SHARED_CLIENTS) sharedClients.delete(sharedClients.keys().next().value!);
  sharedClients.set(key, client);
  return client;
}
