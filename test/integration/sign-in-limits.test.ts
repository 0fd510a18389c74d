import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startOrkaServer, type OrkaUnderTest } from "../helpers/orka-server.ts";

const BURST = 300;
const CONCURRENCY = 20;
const DEFAULT_FAILURE_LIMIT = 30;

interface Refusal {
  status: number;
  retryAfter: string | null;
  body: any;
}

const badSignIn = async (orka: OrkaUnderTest, path = "/api/v1/tasks"): Promise<Refusal> => {
  const response = await fetch(`${orka.url}${path}`, { headers: { authorization: "Bearer orka_not_a_real_token_0123456789" } });
  return { status: response.status, retryAfter: response.headers.get("retry-after"), body: await response.json() };
};
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

    // Made-up paths do not make a row each.
    for (let i = 0; i < 20; i++) expect((await badSignIn(orka, `/api/v1/made-up-${i}`)).status).toBe(429);
    expect((await auditRows(orka)).filter((row) => row.path.startsWith("/api/v1/made-up-"))).toEqual([expect.objectContaining({ count: 20 })]);
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
  });
});
