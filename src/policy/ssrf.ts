import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import { BlockList, isIP, type LookupFunction } from "node:net";
import { Agent, errors, interceptors, request, type Dispatcher } from "undici";
import { withCallSignal } from "../util/call-signal.ts";
import { errorMessage, OrkaError } from "../util/errors.ts";

/** What outbound requests made on a user's behalf may reach. */
export interface EgressPolicy {
  /** Loopback (127.0.0.0/8, ::1) is refused unless the operator allows it (tests do). */
  allowLoopback: boolean;
}

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet("127.0.0.0", 8, "ipv4");
LOOPBACK.addAddress("::1", "ipv6");

const FORBIDDEN = new BlockList();
for (const [net, prefix] of [
  ["0.0.0.0", 8], ["10.0.0.0", 8], ["100.64.0.0", 10], ["169.254.0.0", 16], ["172.16.0.0", 12], ["192.0.0.0", 24],
  ["192.0.2.0", 24], ["192.88.99.0", 24], ["192.168.0.0", 16], ["198.18.0.0", 15], ["198.51.100.0", 24],
  ["203.0.113.0", 24], ["224.0.0.0", 4], ["240.0.0.0", 4],
] as const) FORBIDDEN.addSubnet(net, prefix, "ipv4");
// 6to4 (2002::/16) and Teredo (2001::/32) carry an IPv4 address inside and reach it through a relay,
// so they could lead to a private IPv4 address; no public service needs to be called through them.
for (const [net, prefix] of [
  ["64:ff9b:1::", 48], ["100::", 64], ["2001::", 32], ["2001:2::", 48], ["2001:db8::", 32], ["2001:10::", 28], ["2001:20::", 28],
  ["2002::", 16], ["3fff::", 20], ["5f00::", 16],
] as const) FORBIDDEN.addSubnet(net, prefix, "ipv6");

/** Public IPv6 lives in 2000::/3; everything else (ULA, link-local, multicast, NAT64 of old…) is not public. */
const GLOBAL_UNICAST_V6 = new BlockList();
GLOBAL_UNICAST_V6.addSubnet("2000::", 3, "ipv6");

export const PRIVATE_TARGET = "URL must not target private, loopback, or link-local addresses";

const METADATA_HOSTS = new Set(["metadata", "metadata.google.internal", "metadata.goog", "instance-data", "instance-data.ec2.internal"]);

/** An IPv4 address hidden in an IPv6 one (::ffff:a.b.c.d, ::ffff:7f00:1) is judged as IPv4. */
function unwrapMapped(address: string): string {
  const lower = address.toLowerCase().replace(/^\[|\]$/g, "");
  const dotted = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
  if (dotted) return dotted[1];
  const hex = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(lower);
  if (hex) {
    const high = parseInt(hex[1], 16);
    const low = parseInt(hex[2], 16);
    return `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;
  }
  return lower;
}

/** Why an address may not be reached, or undefined when it may. */
export function forbiddenAddressReason(rawAddress: string, policy: EgressPolicy): string | undefined {
  const address = unwrapMapped(rawAddress);
  const family = isIP(address);
  if (family === 0) return `"${rawAddress}" is not an IP address`;
  const type = family === 4 ? "ipv4" : "ipv6";
  if (LOOPBACK.check(address, type)) return policy.allowLoopback ? undefined : PRIVATE_TARGET;
  if (FORBIDDEN.check(address, type)) return PRIVATE_TARGET;
  if (type === "ipv6" && !GLOBAL_UNICAST_V6.check(address, "ipv6")) return PRIVATE_TARGET;
  return undefined;
}

/** A URL Orka may not call on someone's behalf; a caller tells it apart (`instanceof`) from a target that failed to answer. */
export class EgressRefused extends OrkaError {
  constructor(reason: string) {
    super("permission_denied", reason);
  }
}

/** Checks scheme and host before any connection; DNS answers are checked again at connect time. */
export function checkEgressUrl(text: string, policy: EgressPolicy): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new EgressRefused(`invalid URL: ${text}`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new EgressRefused("only http and https URLs are supported");
  if (!url.hostname) throw new EgressRefused("URL must have a host");
  if (url.username || url.password) throw new EgressRefused("URL userinfo is not supported");
  const host = url.hostname.replace(/^\[|\]$/g, "").toLowerCase().replace(/\.$/, "");
  if (METADATA_HOSTS.has(host)) throw new EgressRefused(PRIVATE_TARGET);
  if (isIP(unwrapMapped(host))) {
    const reason = forbiddenAddressReason(host, policy);
    if (reason) throw new EgressRefused(reason);
  }
  return url;
}

/** A DNS lookup that refuses names resolving to forbidden addresses, so rebinding cannot slip past. */
export function guardedLookup(policy: EgressPolicy, resolve: typeof dnsLookup = dnsLookup): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, "", 0);
      const list = addresses as LookupAddress[];
      for (const { address } of list) {
        const reason = forbiddenAddressReason(address, policy);
        if (reason) return callback(new EgressRefused(reason), "", 0);
      }
      if ((options as { all?: boolean }).all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, list);
      callback(null, list[0].address, list[0].family);
    });
  };
}

/** One outbound request on someone's behalf. */
export interface EgressRequest {
  method?: Dispatcher.HttpMethod;
  headers?: Record<string, string>;
  body?: string;
  /** Redirects to follow, each hop checked like the first; with 0 a 3xx is the answer. */
  maxRedirects: number;
  /** For the whole exchange, reading the body included. */
  timeoutMs: number;
  signal?: AbortSignal;
}

export type EgressResponse = Dispatcher.ResponseData;

const isRedirect = (status: number) => status >= 300 && status < 400;

/** One value of a response header (the first, when it came several times). */
export function headerOf(response: EgressResponse, name: string): string | undefined {
  const value = response.headers[name.toLowerCase()];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * The one way Orka calls a URL someone else chose (web_fetch, HTTP Tools and their probes,
 * webhooks): the URL is checked, every DNS answer is checked again when connecting (so rebinding
 * cannot slip past), and so is every redirect hop. `read` gets the final response while its
 * connection is still open.
 */
export async function guardedRequest<T>(
  rawUrl: string,
  policy: EgressPolicy,
  egress: EgressRequest,
  read: (response: EgressResponse, url: URL) => Promise<T>,
): Promise<T> {
  const dispatcher = guardedDispatcher(policy);
  let url = checkEgressUrl(rawUrl, policy);
  return withCallSignal({ timeoutMs: egress.timeoutMs, parents: [egress.signal] }, async (signal) => {
    for (let hop = 0; ; hop++) {
      const response = await request(url, { method: egress.method ?? "GET", headers: egress.headers, body: egress.body, dispatcher, signal }).catch(
        (err: unknown) => Promise.reject(describeFetchError(err, egress.timeoutMs)),
      );
      const location = headerOf(response, "location");
      if (egress.maxRedirects > 0 && isRedirect(response.statusCode) && location) {
        await response.body.dump();
        if (hop >= egress.maxRedirects) throw new OrkaError("unavailable", `too many redirects (max ${egress.maxRedirects})`);
        url = checkEgressUrl(new URL(location, url).toString(), policy);
        continue;
      }
      try {
        return await read(response, url);
      } catch (err) {
        throw describeFetchError(err, egress.timeoutMs);
      } finally {
        // Whatever `read` left unread is dropped; undici reports that as an error nobody needs.
        response.body.on("error", () => undefined).destroy();
      }
    }
  });
}

const dispatchers = new Map<boolean, Dispatcher>();

/**
 * One pool of kept-alive connections per policy, so repeated calls to an endpoint do not each open a
 * connection. Every connection's address was checked by the guarded lookup when it was opened, and a
 * connection only ever carries requests to the origin it was opened for.
 */
function guardedDispatcher(policy: EgressPolicy): Dispatcher {
  let dispatcher = dispatchers.get(policy.allowLoopback);
  if (!dispatcher) {
    dispatcher = new Agent({ connect: { lookup: guardedLookup(policy) } }).compose(interceptors.decompress());
    dispatchers.set(policy.allowLoopback, dispatcher);
  }
  return dispatcher;
}

const isTimeout = (err: unknown) => (err as Error | undefined)?.name === "TimeoutError";

/**
 * A refusal is thrown as the EgressRefused itself, unwrapped here should undici ever wrap the guarded
 * lookup's in its own error, so callers test `instanceof EgressRefused` and never look at a cause; a
 * timeout and a network failure say what happened; the caller's own errors pass.
 */
function describeFetchError(err: unknown, timeoutMs: number): Error {
  const cause = (err as { cause?: unknown }).cause;
  if (err instanceof EgressRefused) return err;
  if (cause instanceof EgressRefused) return cause;
  if (isTimeout(err) || isTimeout(cause)) return new OrkaError("deadline_exceeded", `request timed out after ${timeoutMs} ms`);
  if (err instanceof errors.UndiciError || (err as NodeJS.ErrnoException).syscall !== undefined) return new OrkaError("unavailable", `fetch failed: ${errorMessage(err)}`);
  return err as Error;
}

/** POSTs JSON to a URL without following redirects; resolves with the status code. */
export function postJsonGuarded(url: URL, body: unknown, headers: Record<string, string>, policy: EgressPolicy, timeoutMs: number): Promise<number> {
  return guardedRequest(
    url.toString(),
    policy,
    { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body), maxRedirects: 0, timeoutMs },
    async (response) => response.statusCode,
  );
}
