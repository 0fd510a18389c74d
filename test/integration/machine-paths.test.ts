import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startOrkaServer, type OrkaUnderTest } from "../helpers/orka-server.ts";

// What Chromium sends when a person types a URL: the strongest case for answering with the app.
const BROWSER_ACCEPT = "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8";

describe("machine paths are not the dashboard", () => {
  let orka: OrkaUnderTest;
  const get = async (path: string, headers: Record<string, string> = {}, method = "GET") => {
    const response = await fetch(`${orka.url}${path}`, { method, headers: { accept: BROWSER_ACCEPT, authorization: `Bearer ${orka.token}`, ...headers } });
    const text = await response.text();
    return { status: response.status, type: response.headers.get("content-type") ?? "", csp: response.headers.get("content-security-policy"), body: text.startsWith("{") ? JSON.parse(text) : text };
  };

  beforeAll(async () => {
    orka = await startOrkaServer();
  });
  afterAll(async () => {
    await orka?.stop();
  });

  it("answers machine paths with a JSON 404, even to a browser", async () => {
    for (const path of ["/metrics", "/openapi.json", "/mcp", "/.well-known/openid-configuration", "/.well-known/oauth-authorization-server"]) {
      const answer = await get(path);
      expect({ path, status: answer.status, type: answer.type }).toEqual({ path, status: 404, type: expect.stringContaining("application/json") });
      expect(answer.body).toEqual({ error: { code: 404, message: `no route for GET ${path}` } });
    }
  });

  it("answers unknown /api and /internal paths with the Orka API error", async () => {
    for (const path of ["/api/v1/nope", "/api/v2/tasks", "/internal/v1/nope", "/internal"]) {
      const answer = await get(path);
      expect({ path, status: answer.status }).toEqual({ path, status: 404 });
      expect(answer.body).toEqual({ error: { code: 404, message: `no route for GET ${path}` } });
    }
  });

  it("answers unknown compatible-endpoint paths in their own protocol's error shape", async () => {
    const openai = await get("/openai/v1/nope");
    expect(openai.status).toBe(404);
    expect(openai.body.error).toMatchObject({ message: "no route for GET /openai/v1/nope", type: "invalid_request_error" });

    const anthropic = await get("/anthropic/v1/nope", { "x-api-key": orka.token, authorization: "" });
    expect(anthropic.status).toBe(404);
    expect(anthropic.body).toEqual({ type: "error", error: { type: "not_found_error", message: "no route for GET /anthropic/v1/nope" } });
  });

  it("serves the app only to browser navigations", async () => {
    const page = await get("/tasks/some-task");
    expect(page.status).toBe(200);
    expect(page.type).toContain("text/html");
    expect(page.body).toContain('<div id="root">');
    expect(page.csp).toContain("default-src 'self'");
    // The app's own address serves it to anyone, with the same protections.
    const root = await get("/", { accept: "*/*" });
    expect({ status: root.status, type: root.type, csp: root.csp }).toEqual({ status: 200, type: expect.stringContaining("text/html"), csp: expect.stringContaining("default-src 'self'") });

    // A program asking for JSON, or sending anything but GET, gets the 404 it can act on.
    for (const [path, accept, method] of [["/tasks/some-task", "application/json", "GET"], ["/tasks/some-task", "*/*", "GET"], ["/tasks/some-task", BROWSER_ACCEPT, "POST"]]) {
      const answer = await get(path, { accept }, method);
      expect({ path, accept, method, status: answer.status }).toEqual({ path, accept, method, status: 404 });
      expect(answer.body).toEqual({ error: { code: 404, message: `no route for ${method} ${path}` } });
    }
  });
});
