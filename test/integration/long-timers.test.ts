import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cpuTicksOf, startOrkaServer, type OrkaUnderTest } from "../helpers/orka-server.ts";

const MAX_TIMER_DELAY_MS = 2 ** 31 - 1;

// A schedule whose next run is further away than setTimeout's limit (about 24.8 days) must sleep
// until then: no timer that fires after 1 ms, no warning flood, no reconcile spinning the CPU.
describe("far-off wake-ups", () => {
  let orka: OrkaUnderTest;
  beforeAll(async () => (orka = await startOrkaServer()));
  afterAll(() => orka.stop());

  it("schedules years or a month out (and a suspended one) leave the server idle and warn nothing", async () => {
    const in30Days = new Date(Date.now() + 30 * 24 * 60 * 60_000);
    const schedules = [
      { name: "leap-day", schedule: "0 0 29 2 *" },
      { name: "in-30-days", schedule: `0 0 ${in30Days.getUTCDate()} ${in30Days.getUTCMonth() + 1} *` },
      { name: "suspended", schedule: "0 0 29 2 *", suspend: true },
    ];
    for (const s of schedules) {
      const created = await orka.api("POST", "/api/v1/tasks", { type: "container", command: ["echo", "tick"], ...s });
      expect(created.status).toBe(201);
    }
    for (const { name } of schedules) await orka.waitFor(name, ["Scheduled"]);
    await new Promise((r) => setTimeout(r, 300));
    for (const { name } of schedules) {
      const { status } = (await orka.api("GET", `/api/v1/tasks/${name}`)).body;
      expect(Date.parse(status.nextScheduleTime) - Date.now(), name).toBeGreaterThan(MAX_TIMER_DELAY_MS);
    }
    const before = cpuTicksOf(orka.pid);
    await new Promise((r) => setTimeout(r, 1_000));
    // An idle server uses a few ticks a second; three spinning reconciles used tens of them.
    expect(cpuTicksOf(orka.pid) - before).toBeLessThan(15);
    expect(orka.output()).not.toContain("TimeoutOverflowWarning");
  });
});
