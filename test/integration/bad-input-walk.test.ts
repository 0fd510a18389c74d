import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningOrka } from "../../src/server.ts";
import { EMBEDDED_ADMIN_TOKEN, startEmbeddedOrka } from "../helpers/embedded.ts";

// Walks every public route with malformed input, as an outside prober would: whatever is wrong
// with a request, the answer is a 4xx in the route's error shape, never a 5xx.
const DEPTH = 10_000;
const deep = "[".repeat(DEPTH) + "]".repeat(DEPTH);

const BODIES: Array<{ label: string; type: string; body: string }> = [
  { label: "JSON null", type: "application/json", body: "null" },
  { label: "JSON array", type: "application/json", body: "[]" },
  { label: "JSON string", type: "application/json", body: '"text"' },
  { label: "broken JSON", type: "application/json", body: '{"spec": ' },
  { label: `JSON nested ${DEPTH} deep`, type: "application/json", body: `{"metadata":{"name":"deep"},"spec":{"parameters":${deep}}}` },
  { label: "plain text", type: "text/plain", body: "hello" },
  { label: "bytes", type: "application/octet-stream", body: "\u0000\u0001binary" },
];

const NAMES = ["x".repeat(300), "%2e%2e%2fsecrets", "UPPER_case", "名前"];
const QUERIES = ["namespace=a&namespace=b", "limit=-1", "limit=abc", "continue=%%%", "labelSelector=a%3D%3D%3Db"];

describe("malformed input on every route", () => {
  let orka: RunningOrka;
  beforeAll(async () => {
    orka = await startEmbeddedOrka();
  });
  afterAll(async () => {
    await orka.close();
  });

  const publicRoutes = () => orka.routes.filter((route) => /^\/(api|openai|anthropic)\//.test(route.url) && !route.url.endsWith("/stream") && !route.url.includes("/watch/"));

  /** Never a 5xx; with `refused`, a 4xx in the route's error shape. */
  async function expectRefusal(method: string, path: string, init: RequestInit = {}, refused = true) {
    const response = await fetch(`${orka.url}${path}`, { method, ...init, headers: { authorization: `Bearer ${EMBEDDED_ADMIN_TOKEN}`, ...init.headers } });
    const text = await response.text();
    const what = `${method} ${path.slice(0, 120)} → ${response.status} ${text.slice(0, 200)}`;
    expect(response.status, what).toBeLessThan(500);
    if (refused) expect(response.status, what).toBeGreaterThanOrEqual(400);
    if (response.status >= 400) expect(JSON.parse(text), what).toHaveProperty("error");
  }

  it("answers every malformed body with a 4xx", async () => {
    const routes = publicRoutes().filter((route) => route.method === "POST" || route.method === "PUT");
    expect(routes.length).toBeGreaterThan(20);
    for (const route of routes) {
      for (const { type, body } of BODIES) {
        await expectRefusal(route.method, route.url.replace(/:[A-Za-z]+/g, "probe"), { headers: { "content-type": type }, body });
      }
    }
  });

  it("refuses a well-formed resource whose JSON schema is nested too deep", async () => {
    const tool = `{"apiVersion":"core.orka.ai/v1alpha1","kind":"Tool","metadata":{"name":"deep"},"spec":{"description":"deep","http":{"url":"https://example.com/"},"parameters":{"type":"object","properties":{"x":${"{\"items\":".repeat(DEPTH)}{}${"}".repeat(DEPTH)}}}}}`;
    await expectRefusal("POST", "/api/v1/tools", { headers: { "content-type": "application/json" }, body: tool });
    expect((await fetch(`${orka.url}/api/v1/tools/deep`, { headers: { authorization: `Bearer ${EMBEDDED_ADMIN_TOKEN}` } })).status).toBe(404);
  });

  it("answers odd names and repeated or malformed query parameters with a 4xx", async () => {
    for (const route of publicRoutes().filter((r) => r.method === "GET" || r.method === "DELETE")) {
      // No object has these names: each is refused, as not found or as not a name.
      if (route.url.includes("/:")) for (const name of NAMES) await expectRefusal(route.method, route.url.replace(/:[A-Za-z]+/g, encodeURIComponent(name)));
      // A route may ignore a parameter it does not take, but never fail on one.
      for (const query of QUERIES) await expectRefusal(route.method, `${route.url.replace(/:[A-Za-z]+/g, "probe")}?${query}`, {}, query.startsWith("namespace="));
    }
  });
});
