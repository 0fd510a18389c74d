import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { attemptEnv } from "../../src/runner/attempt-config.ts";
import type { AttemptExit } from "../../src/runner/runner.ts";
import type { ControlPlaneCall } from "../../src/runner/local/messages.ts";
import { scriptedAiAttempt } from "../helpers/attempt-config.ts";
import { HeldGate } from "../helpers/held-gate.ts";
import { poolPerTest } from "../helpers/pool.ts";

/** Long enough for a pooled worker to start an attempt and make its first call, or remove its files, were the order not held. */
const QUIET_MS = 1500;

describe("what the pool sends its workers", () => {
  const newPool = poolPerTest("pool-gate");

  it("sends an attempt's start, and removes its files, once the writes before them are committed", async () => {
    const gate = new HeldGate();
    const { pool, dir } = newPool({ gate });
    const calls: ControlPlaneCall[] = [];
    pool.serveControlPlane(async (call) => {
      calls.push(call);
      return { status: 204, text: "" };
    });
    const exited = new Promise<AttemptExit>((resolve) => pool.onExit(resolve));
    const dirs = await pool.prepare("a-1");
    const config = scriptedAiAttempt({ controllerURL: "http://127.0.0.1:9", dirs, answer: "done", tools: [] });

    gate.close(); // the attempt's record is written, not yet committed
    pool.start("a-1", attemptEnv(config));
    await sleep(QUIET_MS);
    expect(calls).toEqual([]);
    gate.open();
    expect(await exited).toMatchObject({ attemptId: "a-1", exitCode: 0 });
    expect(calls.length).toBeGreaterThan(0);

    mkdirSync(dirs.workspaceDir, { recursive: true }); // as a built-in tool would have made it
    gate.close(); // the Task's end is written, not yet committed
    let removed = false;
    const removing = pool.cleanup("a-1").then(() => (removed = true));
    await sleep(QUIET_MS);
    expect([removed, existsSync(join(dir, "a-1"))]).toEqual([false, true]);
    gate.open();
    await removing;
    expect(existsSync(join(dir, "a-1"))).toBe(false);
  }, 30_000);
});
