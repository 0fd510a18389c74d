import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startOrkaServer, type OrkaUnderTest } from "../helpers/orka-server.ts";

// Task webhooks, with loopback allowed by the operator switch so a local receiver can be used.
describe("task webhooks", () => {
  let orka: OrkaUnderTest;
  let receiver: http.Server;
  let url = "";
  const received: { headers: http.IncomingHttpHeaders; body: any }[] = [];

  beforeAll(async () => {
    receiver = http.createServer((req, res) => {
      let raw = "";
      req.on("data", (c) => (raw += c));
      req.on("end", () => {
        received.push({ headers: req.headers, body: JSON.parse(raw) });
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", r));
    url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    orka = await startOrkaServer({ ORKA_ALLOW_LOOPBACK_EGRESS: "true" });
  });
  afterAll(async () => {
    await orka.stop();
    receiver.close();
  });

  it("posts the outcome with the Orka headers and records the delivery", async () => {
    await orka.api("POST", "/api/v1/tasks", { name: "hooked", type: "container", command: ["echo", "hi"], webhookURL: url });
    await orka.waitFor("hooked");
    for (let i = 0; i < 50 && !(await orka.api("GET", "/api/v1/tasks/hooked")).body.status.webhookDelivered; i++) await new Promise((r) => setTimeout(r, 100));
    expect((await orka.api("GET", "/api/v1/tasks/hooked")).body.status.webhookDelivered).toBe(true);
    expect(received).toHaveLength(1);
    expect(received[0].headers).toMatchObject({ "x-orka-task": "hooked", "x-orka-namespace": "default" });
    expect(received[0].body).toMatchObject({ taskName: "hooked", taskNamespace: "default", phase: "Succeeded", attempts: 1, resultRef: { available: true } });
  });

  it("refuses a private target without retrying", async () => {
    await orka.api("POST", "/api/v1/tasks", { name: "inward", type: "container", command: ["true"], webhookURL: "http://169.254.169.254/latest" });
    await orka.waitFor("inward");
    for (let i = 0; i < 50 && (await orka.api("GET", "/api/v1/tasks/inward")).body.status.webhookDelivered === undefined; i++) await new Promise((r) => setTimeout(r, 100));
    expect((await orka.api("GET", "/api/v1/tasks/inward")).body.status.webhookDelivered).toBe(false);
    const events = (await orka.api("GET", "/api/v1/tasks/inward/events?type=WebhookRefused")).body.events;
    expect(events[0].summary).toBe("URL must not target private, loopback, or link-local addresses");
  });
});
