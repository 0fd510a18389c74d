import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningOrka } from "../../src/server.ts";
import { EMBEDDED_ADMIN_TOKEN, startEmbeddedOrka } from "../helpers/embedded.ts";
import { startKubeApi, type KubeApiPeer } from "../peers/kube-api.ts";
import { startTokenIssuer, type TokenIssuer } from "../peers/token-issuer.ts";

const call = async (orka: RunningOrka, token: string, method: string, path: string, body?: unknown) => {
  const response = await fetch(`${orka.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body !== undefined ? { "content-type": "application/json" } : {}) },
    body: body !== undefined ? JSON.stringify(body) : undefined,
  });
  return { status: response.status, body: (await response.json()) as any };
};

describe("OIDC sign-in and Kubernetes TokenReview", () => {
  let issuer: TokenIssuer;
  let kube: KubeApiPeer;
  let orka: RunningOrka;
  const oidcToken = (claims: Record<string, unknown>) => issuer.mint("", { typ: "JWT", claims: { aud: "orka-ui", txn: undefined, req_wl: undefined, scope: undefined, ...claims } });

  beforeAll(async () => {
    issuer = await startTokenIssuer();
    kube = await startKubeApi();
    kube.tokens.set("sa-token-of-builder", "system:serviceaccount:builds:builder");
    const kubeconfig = kube.writeKubeconfig(join(mkdtempSync(join(tmpdir(), "orka-kube-")), "config"));
    orka = await startEmbeddedOrka({}, {
      ORKA_OIDC_ISSUER: issuer.url,
      ORKA_OIDC_AUDIENCE: "orka-ui",
      ORKA_OIDC_SUBJECTS: "alice@example.com",
      ORKA_OIDC_NAMESPACE: "people",
      ORKA_TOKEN_REVIEW: "true",
      ORKA_KUBECONFIG: kubeconfig,
      ORKA_TOKEN_REVIEW_AUDIENCES: "orka",
    });
  });
  afterAll(async () => {
    await orka.close();
    await Promise.all([issuer.close(), kube.close()]);
  });

  it("signs in an allowed OIDC subject, bound to the OIDC namespace, and stamps who asked", async () => {
    const token = await oidcToken({ email: "alice@example.com", groups: ["devs"] });
    const whoami = await call(orka, token, "GET", "/api/v1/auth/whoami");
    expect(whoami.body).toMatchObject({ name: "alice@example.com", admin: false, namespace: "people" });
    const created = await call(orka, token, "POST", "/api/v1/tasks", { name: "by-alice", type: "container", command: ["true"] });
    expect(created.status).toBe(201);
    expect(created.body.spec.requestedBy).toMatchObject({ subject: "alice@example.com", issuer: issuer.url, email: "alice@example.com", groups: ["devs"] });
    const elsewhere = await call(orka, token, "GET", "/api/v1/tasks?namespace=default");
    expect([elsewhere.status, elsewhere.body.error.message]).toEqual([403, 'namespace "default" not allowed, restricted to "people"']);
  });

  it("refuses OIDC tokens from other subjects, for other audiences, or expired", async () => {
    const bob = await call(orka, await oidcToken({ sub: "bob@example.com" }), "GET", "/api/v1/tasks");
    expect([bob.status, bob.body.error.message]).toEqual([403, "subject is not allowed to use this server"]);
    for (const token of [await oidcToken({ aud: "another-app" }), await oidcToken({ exp: Math.floor(Date.now() / 1000) - 600 })]) {
      const refused = await call(orka, token, "GET", "/api/v1/tasks");
      expect([refused.status, refused.body.error.message]).toEqual([401, "invalid token"]);
    }
  });

  it("takes a ServiceAccount's namespace from TokenReview, caches the answer, and refuses what the API server does not vouch for", async () => {
    const whoami = await call(orka, "sa-token-of-builder", "GET", "/api/v1/auth/whoami");
    expect(whoami.body).toMatchObject({ name: "system:serviceaccount:builds:builder", namespace: "builds" });
    expect((await call(orka, "sa-token-of-builder", "GET", "/api/v1/tasks?namespace=default")).status).toBe(403);
    expect(kube.reviews.filter((r) => r.token === "sa-token-of-builder")).toHaveLength(1);
    expect(kube.reviews[0].audiences).toEqual(["orka"]);
    const unknown = await call(orka, "not-a-service-account", "GET", "/api/v1/tasks");
    expect([unknown.status, unknown.body.error.message]).toEqual([401, "invalid token"]);
    expect((await call(orka, EMBEDDED_ADMIN_TOKEN, "GET", "/api/v1/tasks")).status).toBe(200);
  });
});

describe("namespace isolation: the watched namespace, bound callers, no cross-namespace references", () => {
  let issuer: TokenIssuer;
  let orka: RunningOrka;
  let teamToken = "";

  beforeAll(async () => {
    issuer = await startTokenIssuer();
    orka = await startEmbeddedOrka({}, {
      ORKA_ENFORCE_NAMESPACE_ISOLATION: "true",
      ORKA_WATCH_NAMESPACE: "team",
      ORKA_TXN_TOKEN_ISSUER: issuer.url,
      ORKA_TXN_TOKEN_AUDIENCE: issuer.audience,
    });
    teamToken = (await call(orka, EMBEDDED_ADMIN_TOKEN, "POST", "/api/v1/auth/tokens", { name: "team", namespace: "team" })).body.token;
  });
  afterAll(async () => {
    await orka.close();
    await issuer.close();
  });

  it("serves only the watched namespace, only to bound callers, and refuses cross-namespace references", async () => {
    const outside = await call(orka, EMBEDDED_ADMIN_TOKEN, "GET", "/api/v1/tasks?namespace=default");
    expect([outside.status, outside.body.error.message]).toEqual([403, "namespace not allowed"]);
    expect((await call(orka, EMBEDDED_ADMIN_TOKEN, "GET", "/api/v1/tasks?namespace=team")).status).toBe(200);

    const unbound = await fetch(`${orka.url}/api/v1/tasks?namespace=team`, { headers: { "txn-token": await issuer.mint("orka:tasks:list") } });
    expect([unbound.status, ((await unbound.json()) as any).error.message]).toEqual([403, "namespace-bound identity required"]);

    const crossRef = await call(orka, teamToken, "POST", "/api/v1/tasks", { name: "x", type: "ai", prompt: "hi", agentRef: { name: "a", namespace: "other" } });
    expect([crossRef.status, crossRef.body.error.message]).toEqual([403, 'cross-namespace references are not allowed: "other" from namespace "team"']);
    const agent = await call(orka, teamToken, "POST", "/api/v1/agents", { metadata: { name: "a" }, spec: { providerRef: { name: "p", namespace: "other" } } });
    expect(agent.status).toBe(403);
    expect((await call(orka, EMBEDDED_ADMIN_TOKEN, "GET", "/api/v1/tasks?namespace=team")).body.items).toHaveLength(0);
    expect((await call(orka, teamToken, "POST", "/api/v1/tasks", { name: "ok", type: "container", command: ["true"] })).status).toBe(201);
  });
});
