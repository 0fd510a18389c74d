import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startOrkaServer, type OrkaUnderTest } from "../helpers/orka-server.ts";

// A server killed with SIGKILL loses no Task: Pending ones start after the restart, and Running
// ones whose attempt died with it are retried by policy or failed — never left Running.
describe("server restart", () => {
  let orka: OrkaUnderTest;
  beforeAll(async () => (orka = await startOrkaServer({ ORKA_WORKER_SLOTS: "2" })));
  afterAll(() => orka.stop());

  it("recovers Pending and Running Tasks after kill -9", async () => {
    await orka.api("POST", "/api/v1/tasks", { name: "retried", type: "container", command: ["sleep", "1"], retryPolicy: { maxRetries: 1, initialDelay: "100ms" } });
    await orka.api("POST", "/api/v1/tasks", { name: "unretried", type: "container", command: ["sleep", "30"] });
    await orka.waitFor("retried", ["Running"]);
    await orka.waitFor("unretried", ["Running"]);
    await orka.api("POST", "/api/v1/tasks", { name: "queued", type: "container", command: ["echo", "ran after restart"] });
    await new Promise((r) => setTimeout(r, 300));
    expect((await orka.api("GET", "/api/v1/tasks/queued")).body.status.phase).toBe("Pending");

    await orka.restart();

    const retried = await orka.waitFor("retried");
    expect(retried.status).toMatchObject({ phase: "Succeeded", attempts: 2 });
    const unretried = await orka.waitFor("unretried");
    expect(unretried.status.phase).toBe("Failed");
    expect(unretried.status.message).toContain("worker lost: the server restarted");
    expect((await orka.waitFor("queued")).status.phase).toBe("Succeeded");
    expect((await orka.api("GET", "/api/v1/tasks/queued/result")).body.result).toContain("ran after restart");
  });
});
