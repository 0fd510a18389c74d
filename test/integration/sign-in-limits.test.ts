import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startOrkaServer, type OrkaUnderTest } from "../helpers/orka-server.ts";
import { startKubeApi, type KubeApiPeer } from "../peers/kube-api.ts";

const BURST = 300;
const CONCURRENCY = 20;
const DEFAULT_FAILURE_LIMIT = 30;

interface Refusal {
  status: number;
  retryAfter: string | null;
  body: any;
}

const badSignIn = async (orka: OrkaUnderTest, path = "/api/v1/tasks", headers: Record<string, string> = {}, token = "orka_not_a_real_token_0123456789"): Promise<Refusal> => {
  const response = await fetch(`${orka.url}${path}`, { headers: { authorization: `Bearer ${token}`, ...headers } });
  return { status: response.status, retryAfter: response.headers.get("retry-after"), body: await response.json() };
};
/** A bad sign-in from a client behind the (trusted) proxy that the test's loopback connection stands for. */
const badSignInFrom = async (orka: OrkaUnderTest, client: string, path = "/api/v1/tasks") => (await badSignIn(orka, path, { "x-forwarded-for": client })).status;
const auditRows = async (orka: OrkaUnderTest) => (await orka.api("GET", "/api/v1/audit?limit=1000")).body.items as any[];

// Failed sign-ins are bounded: per-client throttling and refusals coalesced in the audit log (default settings).
describe("failed sign-ins", () => {
  let orka: OrkaUnderTest;

  beforeAll(async () => {
    orka = await startOrkaServer();
  });
  afterAll(async () => {
    await orka.stop();
  });

  it("answers 429 with Retry-After past the limit, writes a handful of audit rows, and still serves good tokens", async () => {
    const refusals: Refusal[] = [];
    const goodStatuses: number[] = [];
    for (let sent = 0; sent < BURST; sent += CONCURRENCY) {
      const batch = Array.from({ length: Math.min(CONCURRENCY, BURST - sent) }, () => badSignIn(orka));
      const good = orka.api("GET", "/api/v1/tasks");
      refusals.push(...(await Promise.all(batch)));
      goodStatuses.push((await good).status);
    }

    expect(goodStatuses.every((status) => status === 200)).toBe(true);
    const unauthorized = refusals.filter((r) => r.status === 401);
    const throttled = refusals.filter((r) => r.status === 429);
    expect([unauthorized.length, throttled.length]).toEqual([DEFAULT_FAILURE_LIMIT, BURST - DEFAULT_FAILURE_LIMIT]);
    expect(unauthorized[0].body).toEqual({ error: { code: 401, message: "invalid token" } });
    expect(throttled[0].body).toEqual({ error: { code: 429, message: expect.stringMatching(/^too many failed sign-ins from this client; retry in \d+ s$/) } });
    for (const refusal of throttled) expect(Number(refusal.retryAfter)).toBeGreaterThan(0);
    expect(Number(throttled[0].retryAfter)).toBeLessThanOrEqual(60);

    // The compatible endpoints throttle the same client, in their own error shape.
    const compat = await badSignIn(orka, "/openai/v1/models");
    expect([compat.status, compat.body.error.message]).toEqual([429, expect.stringContaining("too many failed sign-ins")]);

    const burstRows = (await auditRows(orka)).filter((row) => row.path === "/api/v1/tasks");
    expect(burstRows.length).toBeLessThanOrEqual(3);
    expect(burstRows.reduce((sum, row) => sum + row.count, 0)).toBe(BURST);
    expect(burstRows.find((row) => row.status === 429)).toMatchObject({ reason: "too many failed sign-ins", client: "127.0.0.1", method: "GET" });

    // Made-up paths do not make a row each (a burst that straddles the turn of a coalescing window, each
    // minute on the clock, makes two).
    for (let i = 0; i < 20; i++) expect((await badSignIn(orka, `/api/v1/made-up-${i}`)).status).toBe(429);
    const madeUpRows = (await auditRows(orka)).filter((row) => row.path.startsWith("/api/v1/made-up-"));
    expect(madeUpRows.length).toBeLessThanOrEqual(2);
    expect(madeUpRows.reduce((sum, row) => sum + row.count, 0)).toBe(20);
  });
});

describe("audit log retention", () => {
  let orka: OrkaUnderTest;
  let teamToken = "";

  beforeAll(async () => {
    orka = await startOrkaServer({ ORKA_AUDIT_RETENTION: "2s", ORKA_AUDIT_MAX_ROWS: "8" });
    teamToken = (await orka.api("POST", "/api/v1/auth/tokens", { name: "team-a", namespace: "team-a" })).body.token;
  });
  afterAll(async () => {
    await orka.stop();
  });

  it("prunes the audit log by age and by row count", async () => {
    expect((await badSignIn(orka)).status).toBe(401);
    const before = await auditRows(orka);
    expect(before).toHaveLength(1);
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    expect((await orka.api("GET", "/api/v1/agents?namespace=ns-0", undefined, teamToken)).status).toBe(403);
    expect((await auditRows(orka)).map((row) => row.namespace)).toEqual(["ns-0"]);

    // Each namespace is its own refusal reason, so each is its own row.
    for (let i = 1; i <= 12; i++) {
      expect((await orka.api("GET", `/api/v1/agents?namespace=ns-${i}`, undefined, teamToken)).status).toBe(403);
    }
    const after = await auditRows(orka);
    expect(after.map((row) => row.namespace)).toEqual(Array.from({ length: 8 }, (_, i) => `ns-${12 - i}`));
  });
});

describe("sign-in and audit settings", () => {
  it("refuses values that are not a positive duration or count, naming the variable", async () => {
    await expect(startOrkaServer({ ORKA_AUTH_FAILURE_WINDOW: "soon" })).rejects.toThrow("ORKA_AUTH_FAILURE_WINDOW must be a positive duration such as 1m");
    await expect(startOrkaServer({ ORKA_AUDIT_MAX_ROWS: "0" })).rejects.toThrow("ORKA_AUDIT_MAX_ROWS must be at least 1");
    // A server that starts after all is stopped at once, so the refusal it should have given is all the test waits for.
    const startError = await startOrkaServer({ ORKA_TRUST_PROXY: "10.0.0.0/8,proxy.local" }).then(
      (orka) => orka.stop().then(() => "started"),
      (err: Error) => err.message,
    );
    expect(startError).toContain(
      'ORKA_TRUST_PROXY: "proxy.local" is not a proxy address: use true (every proxy), or the proxies\' addresses and CIDR ranges such as 10.0.0.0/8,127.0.0.1',
    );
  });
});

// The test's own connection stands for a reverse proxy; each X-Forwarded-For address is a client behind it.
describe("behind a trusted proxy", () => {
  const FAILURE_LIMIT = 4;
  const MAX_ROWS = 8;
  let orka: OrkaUnderTest;
  let teamToken = "";

  beforeAll(async () => {
    orka = await startOrkaServer({ ORKA_TRUST_PROXY: "127.0.0.1", ORKA_AUTH_FAILURE_LIMIT: String(FAILURE_LIMIT), ORKA_AUDIT_MAX_ROWS: String(MAX_ROWS) });
    teamToken = (await orka.api("POST", "/api/v1/auth/tokens", { name: "team-a", namespace: "team-a" })).body.token;
  });
  afterAll(async () => {
    await orka.stop();
  });
  const rowsOf = async (client: string) => (await auditRows(orka)).filter((row) => row.client === client);

  it("counts each forwarded client apart, an IPv6 one by its /64 network as the limiter does, and files its refusals so", async () => {
    const statuses = async (client: string, count: number) => {
      const seen: number[] = [];
      for (let i = 0; i < count; i++) seen.push(await badSignInFrom(orka, client));
      return seen;
    };
    const throttledAfterLimit = [...Array(FAILURE_LIMIT).fill(401), 429];
    expect(await statuses("203.0.113.7", FAILURE_LIMIT + 1)).toEqual(throttledAfterLimit);
    expect(await statuses("198.51.100.9", 1)).toEqual([401]);
    // Two addresses of one /64 are one client; the next /64 is another.
    expect([...(await statuses("2001:db8:1:2::1", 2)), ...(await statuses("2001:db8:1:2:ffff::9", 3))]).toEqual(throttledAfterLimit);
    expect(await statuses("2001:db8:1:3::1", 1)).toEqual([401]);

    expect((await rowsOf("203.0.113.7")).map((row) => [row.status, row.count])).toEqual([[429, 1], [401, FAILURE_LIMIT]]);
    expect((await rowsOf("198.51.100.9")).map((row) => [row.status, row.count])).toEqual([[401, 1]]);
    expect((await rowsOf("2001:db8:1:2::")).map((row) => [row.status, row.count])).toEqual([[429, 1], [401, FAILURE_LIMIT]]);
    expect((await rowsOf("2001:db8:1:3::")).map((row) => [row.status, row.count])).toEqual([[401, 1]]);
  });

  it("files a caller-less refusal under its route whatever namespace it names, keeping only a valid name, and never loses one", async () => {
    const client = "192.0.2.10";
    const queries = ["?namespace=ns-1", "?namespace=ns-2", "?namespace=a&namespace=b", `?namespace=${"x".repeat(300)}`];
    for (const query of queries) expect(await badSignInFrom(orka, client, `/api/v1/tasks${query}`)).toBe(401);
    expect(await rowsOf(client)).toEqual([expect.objectContaining({ path: "/api/v1/tasks", namespace: "ns-1", count: queries.length, status: 401 })]);
    // A repeated namespace alone still makes its row.
    expect(await badSignInFrom(orka, "192.0.2.11", "/api/v1/agents?namespace=a&namespace=b")).toBe(401);
    expect(await rowsOf("192.0.2.11")).toEqual([expect.objectContaining({ path: "/api/v1/agents", count: 1 })]);
    expect((await rowsOf("192.0.2.11"))[0].namespace).toBeUndefined();
  });

  it("keeps a signed-in caller's refusals apart by path, and keeps them through a flood of refusals without a caller", async () => {
    for (const name of ["one", "two", "two"]) {
      expect((await orka.api("GET", `/api/v1/agents/${name}?namespace=team-b`, undefined, teamToken)).status).toBe(403);
    }
    const signedIn = async () => (await auditRows(orka)).filter((row) => row.principal === "team-a").map((row) => [row.path, row.count]);
    expect(await signedIn()).toEqual([["/api/v1/agents/two", 2], ["/api/v1/agents/one", 1]]);

    const FLOOD_CLIENTS = 3 * MAX_ROWS;
    for (let i = 0; i < FLOOD_CLIENTS; i++) expect(await badSignInFrom(orka, `198.18.0.${i + 1}`)).toBe(401);
    const rows = await auditRows(orka);
    expect(rows.filter((row) => row.principal === undefined)).toHaveLength(MAX_ROWS);
    expect(await signedIn()).toEqual([["/api/v1/agents/two", 2], ["/api/v1/agents/one", 1]]);
  });
});

describe("sign-in limits before remote checks", () => {
  const FAILURE_LIMIT = 3;
  let orka: OrkaUnderTest;
  let kube: KubeApiPeer;

  beforeAll(async () => {
    kube = await startKubeApi();
    const kubeconfig = kube.writeKubeconfig(join(mkdtempSync(join(tmpdir(), "orka-kube-")), "config"));
    orka = await startOrkaServer({ ORKA_TOKEN_REVIEW: "true", ORKA_KUBECONFIG: kubeconfig, ORKA_AUTH_FAILURE_LIMIT: String(FAILURE_LIMIT) });
  });
  afterAll(async () => {
    await orka.stop();
    await kube.close();
  });

  it("answers a client past its limit with 429 without asking Kubernetes about its next tokens, and still lets its static token in", async () => {
    const TOKENS = 10;
    const statuses: number[] = [];
    for (let i = 0; i < TOKENS; i++) statuses.push((await badSignIn(orka, "/api/v1/tasks", {}, `unknown-sa-token-${i}`)).status);
    expect(statuses).toEqual([...Array(FAILURE_LIMIT).fill(401), ...Array(TOKENS - FAILURE_LIMIT).fill(429)]);
    // The request that went over the limit was the last to be reviewed.
    expect(kube.reviews.map((review) => review.token)).toEqual(Array.from({ length: FAILURE_LIMIT + 1 }, (_, i) => `unknown-sa-token-${i}`));
    expect((await orka.api("GET", "/api/v1/tasks")).status).toBe(200);
  });
});
