import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { toolResultsOf } from "../peers/llm-server.ts";
import { startOrkaWithPeer } from "../helpers/orka-with-peer.ts";

const PRIVATE = "URL must not target private, loopback, or link-local addresses";

// Issue 12 item 2 (and its review, items 2 and 9): a user's HTTP Tool aimed at loopback by name or through a {{template}} is
// refused when called and when probed, unless the operator set ORKA_ALLOW_LOOPBACK_EGRESS.
describe.each([
  { allowLoopback: false, title: "without ORKA_ALLOW_LOOPBACK_EGRESS, a user's Tool never reaches loopback" },
  { allowLoopback: true, title: "with ORKA_ALLOW_LOOPBACK_EGRESS=true, the same Tools are called" },
])("$title", ({ allowLoopback }) => {
  let listener: http.Server;
  const hits: string[] = [];
  let port = 0;
  let setup: Awaited<ReturnType<typeof startOrkaWithPeer>>;
  let userToken = "";

  beforeAll(async () => {
    listener = http.createServer((req, res) => {
      hits.push(`${req.method} ${req.url}`);
      if (req.url === "/bounce") return void res.writeHead(302, { location: `http://localhost:${port}/landed` }).end();
      res.writeHead(200, { "content-type": "text/plain" }).end("inside the network");
    });
    await new Promise<void>((resolve) => listener.listen(0, "127.0.0.1", resolve));
    port = (listener.address() as AddressInfo).port;
    setup = await startOrkaWithPeer("", allowLoopback ? { ORKA_ALLOW_LOOPBACK_EGRESS: "true" } : {});
    const { orka } = setup;
    userToken = (await orka.api("POST", "/api/v1/auth/tokens", { name: "user-a", namespace: "default" })).body.token;
    for (const tool of [
      { metadata: { name: "by-name" }, spec: { description: "A local name", http: { url: `http://localhost:${port}/by-name` } } },
      { metadata: { name: "bouncer" }, spec: { description: "Redirects elsewhere", http: { url: `http://localhost:${port}/bounce` } } },
      {
        metadata: { name: "by-template" },
        spec: {
          description: "A host from the model",
          parameters: { type: "object", properties: { host: { type: "string" } }, required: ["host"] },
          http: { url: `http://{{host}}:${port}/by-template` },
        },
      },
    ]) {
      const created = await orka.api("POST", "/api/v1/tools", tool, userToken);
      expect(created.status, JSON.stringify(created.body)).toBe(201);
    }
    const agent = await orka.api("POST", "/api/v1/agents", { metadata: { name: "caller" }, spec: { providerRef: { name: "peer" }, tools: [{ name: "by-name" }, { name: "by-template" }, { name: "bouncer" }] } }, userToken);
    expect(agent.status, JSON.stringify(agent.body)).toBe(201);
  });
  afterAll(async () => {
    await setup?.stop();
    listener.close();
  });

  it("answers the model with a refusal, or with the endpoint's reply when allowed", async () => {
    const { orka, peer } = setup;
    const model = `m-egress-${allowLoopback}`;
    peer.script(model, [
      { toolCalls: [{ name: "by-name", arguments: {} }, { name: "by-template", arguments: { host: "127.0.0.1" } }, { name: "bouncer", arguments: {} }] },
      { text: "done" },
    ]);
    const created = await orka.api("POST", "/api/v1/tasks", { name: "reach-in", type: "ai", agentRef: "caller", prompt: "call both", ai: { model } }, userToken);
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect((await orka.waitFor("reach-in")).status.phase).toBe("Succeeded");

    const seenByModel = toolResultsOf(peer.requests.filter((r) => r.body.model === model)[1].body);
    expect(seenByModel).toHaveLength(3);
    const calls = hits.filter((hit) => !hit.startsWith("HEAD "));
    if (allowLoopback) {
      // A redirect is answered, not followed: the Tool's request (and credential) goes nowhere else.
      expect(seenByModel).toEqual(["inside the network", "inside the network", "Error executing tool: tool returned HTTP 302: "]);
      expect(calls).toEqual(["POST /by-name", "POST /by-template", "POST /bounce"]);
    } else {
      for (const result of seenByModel) expect(result).toContain(PRIVATE);
      expect(hits).toEqual([]);
    }
  });

  it("probes availability through the same guard", async () => {
    const { orka } = setup;
    const read = async () => (await orka.api("GET", "/api/v1/tools/by-name", undefined, userToken)).body;
    let tool = await read();
    for (let i = 0; i < 100 && (allowLoopback ? !hits.includes("HEAD /by-name") : tool.available !== false); i++) {
      await new Promise((r) => setTimeout(r, 50));
      tool = await read();
    }
    expect(tool.available).toBe(allowLoopback);
    if (!allowLoopback) {
      expect(tool.status.error).toBe(`endpoint unreachable: ${PRIVATE}`);
      expect(hits).toEqual([]);
    }
  });

  it("refuses at creation, for an admin too, a Tool URL that no call could reach", async () => {
    const { orka } = setup;
    const tool = (name: string, url: string) => ({ metadata: { name }, spec: { description: "d", http: { url } } });
    const publicOnly = `Orka calls HTTP Tools only at public addresses${allowLoopback ? "" : " (ORKA_ALLOW_LOOPBACK_EGRESS=true lets them reach loopback)"}`;
    for (const url of ["http://10.0.0.1/x", "http://169.254.169.254/{{path}}", "http://metadata.google.internal/", "http://[fd00::1]/"]) {
      expect((await orka.api("POST", "/api/v1/tools", tool("inside", url))).body.error, url).toEqual({ code: 400, message: `spec.http.url: ${PRIVATE}; ${publicOnly}` });
    }
    const withCredentials = await orka.api("POST", "/api/v1/tools", tool("inside", "https://user:pw@example.com/x"));
    expect(withCredentials.body.error.message).toBe("spec.http.url: URL userinfo is not supported; put the credential in a Secret and name it in spec.http.authSecretRef");
    const loopback = await orka.api("POST", "/api/v1/tools", tool("on-loopback", `http://127.0.0.1:${port}/x`));
    expect([loopback.status, loopback.body.error?.message]).toEqual(allowLoopback ? [201, undefined] : [400, `spec.http.url: ${PRIVATE}; ${publicOnly}`]);
    expect((await orka.api("GET", "/api/v1/tools/inside")).status).toBe(404);
  });
});
