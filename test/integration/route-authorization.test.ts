import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningOrka } from "../../src/server.ts";
import { EMBEDDED_ADMIN_TOKEN, startEmbeddedOrka } from "../helpers/embedded.ts";
import { startTokenIssuer, type TokenIssuer } from "../peers/token-issuer.ts";

// Walks every route the server serves, so a new route without a check fails here.
describe("every route is authorized", () => {
  let orka: RunningOrka;
  let issuer: TokenIssuer;
  let teamToken = "";
  beforeAll(async () => {
    issuer = await startTokenIssuer();
    // Walking every route without a token is far more failed sign-ins than one client is allowed by default.
    orka = await startEmbeddedOrka({}, {
      ORKA_TXN_TOKEN_ISSUER: issuer.url,
      ORKA_TXN_TOKEN_AUDIENCE: issuer.audience,
      ORKA_TXN_TOKEN_MODE: "enforce",
      ORKA_AUTH_FAILURE_LIMIT: "10000",
    });
    const created = await fetch(`${orka.url}/api/v1/auth/tokens`, {
      method: "POST",
      headers: { authorization: `Bearer ${EMBEDDED_ADMIN_TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "team-a", namespace: "team-a" }),
    });
    teamToken = ((await created.json()) as { token: string }).token;
  });
  afterAll(async () => {
    await orka.close();
    await issuer.close();
  });

  const call = (method: string, url: string, token?: string) =>
    fetch(`${orka.url}${url.replace(/:[A-Za-z]+/g, "x")}${url.includes("?") ? "&" : "?"}namespace=team-b`, {
      method,
      headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(method === "GET" || method === "DELETE" ? {} : { "content-type": "application/json" }) },
      body: method === "GET" || method === "DELETE" ? undefined : JSON.stringify({ namespace: "team-b" }),
    });

  it("refuses every /api/v1, /openai and /anthropic route without a token", async () => {
    const routes = orka.routes.filter((r) => /^\/(api|openai|anthropic)\//.test(r.url));
    expect(routes.length).toBeGreaterThan(40);
    for (const route of routes) {
      const response = await call(route.method, route.url);
      expect(response.status, `${route.method} ${route.url}`).toBe(401);
    }
  });

  it("refuses a namespace-A token on every /api/v1 route of namespace B", async () => {
    const routes = orka.routes.filter((r) => r.url.startsWith("/api/v1/") && !r.url.startsWith("/api/v1/auth/"));
    for (const route of routes) {
      const response = await call(route.method, route.url, teamToken);
      const body = (await response.json()) as { error?: { message: string } };
      // Routes that need more than a user token may refuse on the role first; either way, nothing gets through.
      expect([route.method, route.url, response.status]).toEqual([route.method, route.url, 403]);
      expect(body.error?.message, `${route.method} ${route.url}`).toMatch(/^namespace "team-b" not allowed, restricted to "team-a"$|needs an? (admin|reviewer)/);
    }
  });

  it("refuses a transaction token without scopes on every route that acts on something", async () => {
    const token = await issuer.mint("unrelated:scope", { tctx: { namespace: "team-b" } });
    const routes = orka.routes.filter((r) => /^\/(api|openai|anthropic)\//.test(r.url));
    for (const route of routes) {
      const response = await fetch(`${orka.url}${route.url.replace(/:[A-Za-z]+/g, "x")}?namespace=team-b`, {
        method: route.method,
        headers: { "txn-token": token, ...(route.method === "GET" || route.method === "DELETE" ? {} : { "content-type": "application/json" }) },
        body: route.method === "GET" || route.method === "DELETE" ? undefined : JSON.stringify({ namespace: "team-b" }),
      });
      const expected = route.url === "/api/v1/auth/validate" || route.url === "/api/v1/auth/whoami" ? 200 : 403;
      expect([route.method, route.url, response.status]).toEqual([route.method, route.url, expected]);
    }
  });

  it("refuses every /internal/v1 route without a worker token, admin token included", async () => {
    const routes = orka.routes.filter((r) => r.url.startsWith("/internal/v1/"));
    expect(routes.length).toBeGreaterThan(10);
    for (const route of routes) {
      for (const token of [undefined, EMBEDDED_ADMIN_TOKEN, teamToken]) {
        const response = await call(route.method, route.url, token);
        expect(response.status, `${route.method} ${route.url} with ${token ? "a non-worker token" : "no token"}`).toBe(401);
      }
    }
  });

  it("keeps an audit record of every refusal, without the presented token", async () => {
    await call("GET", "/api/v1/tasks", "orka_made_up_token_value_123456");
    // The audit lists by the time of each row's latest refusal, in milliseconds: two in the same one have no order.
    await new Promise((resolve) => setTimeout(resolve, 5));
    await call("GET", "/api/v1/agents", teamToken);
    const audit = await fetch(`${orka.url}/api/v1/audit?limit=5`, { headers: { authorization: `Bearer ${EMBEDDED_ADMIN_TOKEN}` } });
    const { items } = (await audit.json()) as { items: any[] };
    expect(items[0]).toMatchObject({ method: "GET", path: "/api/v1/agents", status: 403, principal: "team-a", namespace: "team-b", reason: 'namespace "team-b" not allowed, restricted to "team-a"' });
    expect(items[1]).toMatchObject({ method: "GET", path: "/api/v1/tasks", status: 401, reason: "invalid token" });
    expect(JSON.stringify(items)).not.toContain("orka_made_up_token_value");
    expect((await fetch(`${orka.url}/api/v1/audit`, { headers: { authorization: `Bearer ${teamToken}` } })).status).toBe(403);
  });
});
