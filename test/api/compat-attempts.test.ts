import { describe, expect, it } from "vitest";
import { CompatAttempts, type CompatJob } from "../../src/api/compat/attempts.ts";
import type { AttemptExit, WorkloadRunner } from "../../src/runner/runner.ts";
import { OrkaError } from "../../src/util/errors.ts";

/** A runner that only records what it is asked, and reports exits when the test says so. */
function recordingRunner() {
  const calls: string[] = [];
  const started = new Map<string, Record<string, string>>();
  const exitListeners: ((exit: AttemptExit) => void)[] = [];
  const runner: WorkloadRunner = {
    prepare: async (id) => {
      calls.push(`prepare ${id}`);
      return { workspaceDir: `/w/${id}/workspace`, artifactsDir: `/w/${id}/artifacts`, tmpDir: `/w/${id}/tmp` };
    },
    adopt: () => Promise.reject(new OrkaError("internal", "compat attempts are never adopted")),
    checkOutForAttempt: () => Promise.reject(new OrkaError("internal", "compat attempts check nothing out")),
    workspaceOf: (id) => ({ workTree: `/w/${id}/workspace`, gitDir: `/w/${id}/git` }),
    start: (id, env) => {
      calls.push(`start ${id}`);
      started.set(id, env);
    },
    kill: (id, reason) => void calls.push(`kill ${id}: ${reason}`),
    isRunning: (id) => started.has(id),
    cleanup: async (id) => void calls.push(`cleanup ${id}`),
    onLog: () => undefined,
    onExit: (listener) => void exitListeners.push(listener),
    close: async () => undefined,
  };
  const exit = (attemptId: string, exitCode = 0, reason?: string) => exitListeners.forEach((listener) => listener({ attemptId, exitCode, reason }));
  return { runner, calls, started, exit };
}

const job: CompatJob = {
  namespace: "default",
  endpoint: { name: "p", type: "openai", model: "m", apiKey: "sk-key" },
  system: "",
  messages: [{ role: "user", content: "hi" }],
  tools: ["file_write"],
  maxTokens: 100,
  turnBudget: 10,
  progress: true,
};

function setup(maxRunning = 4) {
  const recorded = recordingRunner();
  const compat = new CompatAttempts({ runner: recorded.runner, controllerURL: () => "http://orka.test", toolSettings: { fetch: { egress: { allowLoopback: false }, timeoutMs: 1 }, search: { provider: "duckduckgo", timeoutMs: 1 } }, modelCalls: { retryBaseMs: 1, timeoutMs: 1 }, maxRunning });
  /** Starts a request and waits until its attempt is started; answers its id, token and the pending answer. */
  const begin = async (signal = new AbortController().signal, onProgress?: (note: string) => void) => {
    const answer = compat.run(job, { signal, onProgress });
    answer.catch(() => undefined);
    while (recorded.started.size === 0) await new Promise((r) => setImmediate(r));
    const [[attemptId, env]] = [...recorded.started];
    recorded.started.clear();
    return { attemptId, token: env.ORKA_WORKER_TOKEN, env, answer };
  };
  return { compat, begin, ...recorded };
}

const refusal = (call: () => unknown) => {
  try {
    call();
  } catch (err) {
    return err instanceof OrkaError ? [err.code, err.message] : err;
  }
  return undefined;
};

describe("compat requests as attempts of the runner", () => {
  it("starts the request as a compat attempt and hands its progress and answer to the waiting request", async () => {
    const { compat, begin, calls, exit } = setup();
    const notes: string[] = [];
    const { attemptId, token, env, answer } = await begin(undefined, (note) => notes.push(note));
    expect(attemptId).toMatch(/^compat-[0-9a-f]{16}$/);
    expect(env).toMatchObject({ ORKA_ATTEMPT_KIND: "compat", ORKA_CONTROLLER_URL: "http://orka.test", ORKA_WORKSPACE_DIR: `/w/${attemptId}/workspace`, ORKA_AI_TOOLS: "file_write" });
    compat.reporter(token, attemptId).progress("[Tool file_write completed]");
    compat.reporter(token, attemptId).finish({ answer: { text: "done", usage: { inputTokens: 1, outputTokens: 2 } } });
    expect(await answer).toEqual({ text: "done", usage: { inputTokens: 1, outputTokens: 2 } });
    expect(notes).toEqual(["[Tool file_write completed]"]);
    expect(refusal(() => compat.reporter(token, attemptId).finish({ error: { message: "again" } }))).toEqual(["conflict", `compat attempt ${attemptId} has already ended its request`]);
    exit(attemptId);
    expect(calls).toEqual([`prepare ${attemptId}`, `start ${attemptId}`, `cleanup ${attemptId}`]);
  });

  it("checks an attempt's token like a Task attempt's: its own attempt only, and void once the attempt has ended", async () => {
    const { compat, begin, exit } = setup();
    const first = await begin();
    const second = await begin();
    expect(refusal(() => compat.reporter("made-up", first.attemptId))).toEqual(["unauthenticated", "invalid token"]);
    expect(refusal(() => compat.reporter(second.token, first.attemptId))).toEqual(["permission_denied", `token is not valid for compat attempt ${first.attemptId}`]);
    exit(first.attemptId, 137, "worker process exited (SIGKILL)");
    await expect(first.answer).rejects.toThrow("the worker running this request ended without an answer: worker process exited (SIGKILL)");
    expect(refusal(() => compat.reporter(first.token, first.attemptId))).toEqual(["unauthenticated", "invalid token"]);
  });

  it("keeps an Orka error's code from the attempt, and leaves any other failure a plain error", async () => {
    const { compat, begin } = setup();
    const coded = await begin();
    compat.reporter(coded.token, coded.attemptId).finish({ error: { message: "bad field", code: "invalid_argument", field: "x" } });
    await expect(coded.answer).rejects.toMatchObject({ code: "invalid_argument", field: "x", message: "bad field" });
    const plain = await begin();
    compat.reporter(plain.token, plain.attemptId).finish({ error: { message: "model refused to answer" } });
    const err = await plain.answer.catch((e: unknown) => e);
    expect([err instanceof OrkaError, (err as Error).message]).toEqual([false, "model refused to answer"]);
  });

  it("kills the attempt when the client leaves, and removes its directories when it has ended", async () => {
    const { begin, calls, exit } = setup();
    const client = new AbortController();
    const { attemptId, answer } = await begin(client.signal);
    client.abort(new OrkaError("unavailable", "client went away"));
    await expect(answer).rejects.toThrow("client went away");
    expect(calls.at(-1)).toBe(`kill ${attemptId}: the client went away`);
    exit(attemptId, 1, "attempt was stopped");
    expect(calls.at(-1)).toBe(`cleanup ${attemptId}`);
  });

  it("refuses a request past the most that may run at once with 429, and takes one again when an attempt has ended", async () => {
    const { compat, begin, exit, calls } = setup(2);
    const first = await begin();
    await begin();
    const third = compat.run(job, { signal: new AbortController().signal });
    await expect(third).rejects.toMatchObject({ code: "resource_exhausted", httpStatus: 429 });
    expect(calls.filter((call) => call.startsWith("prepare"))).toHaveLength(2);
    exit(first.attemptId);
    const fourth = await begin();
    expect(fourth.attemptId).not.toBe(first.attemptId);
  });
});
