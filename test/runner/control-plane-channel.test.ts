import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { attemptEnv, type AttemptConfig } from "../../src/runner/attempt-config.ts";
import type { AttemptExit } from "../../src/runner/runner.ts";
import { ControlPlaneChannel } from "../../src/runner/local/control-plane-channel.ts";
import type { ControlPlaneCall, FromWorker } from "../../src/runner/local/messages.ts";
import { LocalWorkerPool } from "../../src/runner/local/pool.ts";
import { OrkaError } from "../../src/util/errors.ts";
import { DEFAULT_GIT_SETTINGS } from "../../src/workspace/git.ts";

describe("the pool's control-plane channel", () => {
  let pool: LocalWorkerPool | undefined;
  let dir: string | undefined;
  afterEach(async () => {
    await pool?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("carries a pooled attempt's requests to the runner: no HTTP, the attempt's token on each", async () => {
    dir = mkdtempSync(join(tmpdir(), "orka-channel-"));
    pool = new LocalWorkerPool({ size: 1, attemptsDir: dir, git: DEFAULT_GIT_SETTINGS });
    const calls: ControlPlaneCall[] = [];
    pool.serveControlPlane(async (call) => {
      calls.push(call);
      return call.path.startsWith("memories/") ? { status: 200, text: "[]" } : { status: 204, text: "" };
    });
    const exited = new Promise<AttemptExit>((resolve) => pool!.onExit(resolve));
    const config: AttemptConfig = {
      attemptId: "a-1",
      attempt: 1,
      journal: { run: 1, resume: false },
      task: { name: "t", namespace: "default", uid: "u", type: "ai" },
      // Nothing listens on the discard port: a request sent over HTTP would fail the attempt.
      controllerURL: "http://127.0.0.1:9",
      token: "attempt-token",
      ...(await pool.prepare("a-1")),
      toolSettings: { fetch: { egress: { allowLoopback: false }, timeoutMs: 1000 }, search: { provider: "duckduckgo", timeoutMs: 1000 } },
      ai: {
        endpoint: { name: "offline", type: "scripted", model: "scripted", script: { turns: [{ text: "answered over the channel" }] } },
        fallbacks: [],
        prompt: "hi",
        systemPrompt: "",
        skills: [],
        tools: ["recall_memory"],
        customTools: [],
        turnBudget: 3,
        modelCalls: { retryBaseMs: 1, timeoutMs: 10_000 },
      },
      coordination: { enabled: false, maxDepth: 3, maxChildren: 5, allowedAgents: [], depth: 0 },
      autonomous: { mode: false, iteration: 0, maxIterations: 0 },
      approvalRequiredTools: [],
    };
    pool.start("a-1", attemptEnv(config));
    expect(await exited).toMatchObject({ attemptId: "a-1", exitCode: 0 });
    const result = calls.find((call) => call.path === "results/default/t");
    expect(Buffer.from(result!.body!).toString()).toBe("answered over the channel");
    expect(calls.map((call) => call.path)).toEqual(expect.arrayContaining(["memories/default?limit=5", "journal/default/t"]));
    for (const call of calls) expect(call.headers.authorization).toBe("Bearer attempt-token");
  });

  it("gives up on a call at its signal, drops the late answer, and fails what waits when the runner goes", async () => {
    const sent: Extract<FromWorker, { type: "call" }>[] = [];
    const channel = new ControlPlaneChannel((message) => (message.type === "call" && sent.push(message), true));
    const request = { method: "GET", path: "plans/default/t", headers: {} };

    const timedOut = channel.transport.send(request, AbortSignal.timeout(20)).catch((err: Error) => err.name);
    expect(await timedOut).toBe("TimeoutError");
    channel.answer({ type: "reply", id: sent[0].id, status: 200, text: "late" });

    const answered = channel.transport.send(request, new AbortController().signal);
    channel.answer({ type: "reply", id: sent[1].id, status: 200, text: "{}" });
    expect(await answered).toEqual({ status: 200, text: "{}" });

    const waiting = channel.transport.send(request, new AbortController().signal).catch((err: unknown) => err);
    channel.close("runner went away");
    expect(await waiting).toEqual(new OrkaError("unavailable", "runner went away"));
    expect(sent).toHaveLength(3);
  });

  it("refuses at once when the runner cannot be reached", async () => {
    const channel = new ControlPlaneChannel(() => false);
    const refused = await channel.transport.send({ method: "GET", path: "plans/default/t", headers: {} }, new AbortController().signal).catch((err: OrkaError) => err);
    expect(refused).toMatchObject({ code: "unavailable", message: "the runner is not reachable" });
  });
});
