import { getEventListeners } from "node:events";
import { describe, expect, it, vi } from "vitest";
import { attemptEnv } from "../../src/runner/attempt-config.ts";
import type { AttemptExit } from "../../src/runner/runner.ts";
import { ControlPlaneChannel } from "../../src/runner/local/control-plane-channel.ts";
import type { ControlPlaneCall, FromWorker } from "../../src/runner/local/messages.ts";
import { OrkaError } from "../../src/util/errors.ts";
import { ControlPlaneClient } from "../../src/worker/client.ts";
import { scriptedAiAttempt } from "../helpers/attempt-config.ts";
import { poolPerTest } from "../helpers/pool.ts";
import { storedResult } from "../helpers/stand-in-control-plane.ts";

describe("the pool's control-plane channel", () => {
  const newPool = poolPerTest("channel");

  it("carries a pooled attempt's requests to the runner: no HTTP, the attempt's token on each", async () => {
    const { pool } = newPool();
    const calls: ControlPlaneCall[] = [];
    pool.serveControlPlane(async (call) => {
      calls.push(call);
      return call.path.startsWith("sessions/") ? { status: 200, text: "[]" } : { status: 204, text: "" };
    });
    const exited = new Promise<AttemptExit>((resolve) => pool.onExit(resolve));
    // Nothing listens on the discard port: a request sent over HTTP would fail the attempt.
    const config = scriptedAiAttempt({ controllerURL: "http://127.0.0.1:9", dirs: await pool.prepare("a-1"), answer: "answered over the channel", tools: ["recall_memory"] });
    // A session makes the attempt read as well as write: its history is its one GET.
    config.session = { name: "s", append: false, maxMessages: 10 };
    pool.start("a-1", attemptEnv(config));
    expect(await exited).toMatchObject({ attemptId: "a-1", exitCode: 0 });
    expect(storedResult(calls)).toBe("answered over the channel");
    expect(calls.map((call) => call.path)).toEqual(expect.arrayContaining(["sessions/default/s/messages?limit=10", "journal/default/t"]));
    for (const call of calls) expect(call.headers.authorization).toBe("Bearer attempt-token");
  });

  it("gives up on a call at its time or its signal and cancels it at the runner, drops the late answer, and fails what waits when the runner goes", async () => {
    const sent: FromWorker[] = [];
    const channel = new ControlPlaneChannel((message) => (sent.push(message), true));
    const transport = channel.transportFor("a-1");
    const request = { method: "GET", path: "plans/default/t", headers: {} };
    const callIds = () => sent.flatMap((message) => (message.type === "call" ? [message.id] : []));

    const timedOut = transport.send(request, { timeoutMs: 20 }).catch((err: Error) => err.name);
    expect(await timedOut).toBe("TimeoutError");
    expect(sent.at(-1)).toEqual({ type: "cancel", id: callIds()[0] });
    channel.answer({ type: "reply", id: callIds()[0], status: 200, text: "late" });

    const caller = new AbortController();
    const abandoned = transport.send(request, { timeoutMs: 60_000, signal: caller.signal }).catch((err: unknown) => err);
    caller.abort(new Error("the caller gave up"));
    expect(await abandoned).toEqual(new Error("the caller gave up"));
    expect(sent.at(-1)).toEqual({ type: "cancel", id: callIds()[1] });

    const answered = transport.send(request, { timeoutMs: 60_000, signal: new AbortController().signal });
    channel.answer({ type: "reply", id: callIds()[2], status: 200, text: "{}" });
    expect(await answered).toEqual({ status: 200, text: "{}" });

    const waiting = transport.send(request, { timeoutMs: 60_000 }).catch((err: unknown) => err);
    channel.close("runner went away");
    expect(await waiting).toEqual(new OrkaError("unavailable", "runner went away"));
    expect(callIds()).toHaveLength(4);
    expect(sent.filter((message) => message.type === "cancel")).toHaveLength(2);
  });

  it("gives a stopped attempt's calls a few seconds, not the channel's two minutes, and leaves other attempts' calls waiting", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout"] });
    try {
      const sent: FromWorker[] = [];
      const channel = new ControlPlaneChannel((message) => (sent.push(message), true));
      const request = { method: "POST", path: "events/default/t/task/t", headers: {} };
      const stoppedTransport = channel.transportFor("a-stopped");
      const stopped = stoppedTransport.send(request, { timeoutMs: 60_000 }).catch((err: OrkaError) => err);
      const other = channel.transportFor("a-other").send(request, { timeoutMs: 60_000 });
      channel.stopping("a-stopped");
      vi.advanceTimersByTime(5_000);
      expect(await stopped).toMatchObject({ code: "unavailable", message: "the attempt was stopped and the control plane did not answer within 5s" });
      expect(sent.filter((message) => message.type === "cancel")).toHaveLength(1);
      // A call it makes after that is refused at once, and nothing is sent for it.
      const sentBefore = sent.length;
      expect(await stoppedTransport.send(request, { timeoutMs: 60_000 }).catch((err: OrkaError) => err)).toMatchObject({ code: "unavailable" });
      expect(sent).toHaveLength(sentBefore);
      const otherId = sent.flatMap((message) => (message.type === "call" ? [message.id] : [])).at(-1)!;
      channel.answer({ type: "reply", id: otherId, status: 204, text: "" });
      expect(await other).toEqual({ status: 204, text: "" });
    } finally {
      vi.useRealTimers();
    }
  });

  it("lets go of a call's signal however the call ends, and refuses at once a call whose signal has aborted", async () => {
    const sent: FromWorker[] = [];
    const channel = new ControlPlaneChannel((message) => (sent.push(message), true));
    const transport = channel.transportFor("a-1");
    const request = { method: "GET", path: "plans/default/t", headers: {} };
    const lastCallId = () => sent.flatMap((message) => (message.type === "call" ? [message.id] : [])).at(-1)!;

    const answeredSignal = new AbortController().signal;
    const answered = transport.send(request, { timeoutMs: 60_000, signal: answeredSignal });
    expect(getEventListeners(answeredSignal, "abort")).toHaveLength(1);
    channel.answer({ type: "reply", id: lastCallId(), status: 204, text: "" });
    await answered;
    expect(getEventListeners(answeredSignal, "abort")).toHaveLength(0);

    const timedOutSignal = new AbortController().signal;
    await transport.send(request, { timeoutMs: 10, signal: timedOutSignal }).catch(() => undefined);
    expect(getEventListeners(timedOutSignal, "abort")).toHaveLength(0);

    const closedSignal = new AbortController().signal;
    const closed = transport.send(request, { timeoutMs: 60_000, signal: closedSignal }).catch(() => undefined);
    channel.close("runner went away");
    await closed;
    expect(getEventListeners(closedSignal, "abort")).toHaveLength(0);

    // Whatever its reason, even none worth the name.
    const sentBefore = sent.length;
    expect(await transport.send(request, { timeoutMs: 60_000, signal: AbortSignal.abort(null) }).then(() => "sent", (reason: unknown) => reason)).toBeNull();
    expect(sent).toHaveLength(sentBefore);
  });

  it("fails a call the control plane does not answer in time as the worker's client reports it: the call's deadline, in seconds", async () => {
    const sent: FromWorker[] = [];
    const channel = new ControlPlaneChannel((message) => (sent.push(message), true));
    const client = new ControlPlaneClient({ transport: channel.transportFor("a-1"), token: "t", namespace: "default", task: "t" });
    const failed = await client.post("plans/default/t", {}, { timeoutMs: 50 }).then(() => undefined, (err: unknown) => err);
    expect(failed).toEqual(new OrkaError("deadline_exceeded", "the control plane did not answer within 0.05s"));
    // The runner is told to stop what the call started.
    expect(sent.map((message) => message.type)).toEqual(["call", "cancel"]);
  });

  it("refuses at once when the runner cannot be reached", async () => {
    const channel = new ControlPlaneChannel(() => false);
    const refused = await channel.transportFor("a-1").send({ method: "GET", path: "plans/default/t", headers: {} }, { timeoutMs: 60_000 }).catch((err: OrkaError) => err);
    expect(refused).toMatchObject({ code: "unavailable", message: "the runner is not reachable" });
  });
});
