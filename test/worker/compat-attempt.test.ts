import http from "node:http";
import type { AddressInfo } from "node:net";
import { readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { ScriptedTurn } from "../../src/resources/provider.ts";
import { compatAttemptEnv, readWorkerEnv, type CompatAttemptConfig } from "../../src/runner/attempt-config.ts";
import { makeAttemptDirs } from "../../src/runner/attempt-dirs.ts";
import { prepareAttemptDirs } from "../../src/runner/local/dirs.ts";
import { runCompatAttempt } from "../../src/worker/compat-attempt.ts";
import { httpTransport } from "../../src/worker/transport.ts";

// A compat request's tool loop in the worker, against a stand-in for the API server that waits for it.
describe("compat attempt", () => {
  let server: http.Server;
  let url = "";
  const posts: { path: string; authorization?: string; body: any }[] = [];
  const attemptsDir = join(tmpdir(), `orka-compat-attempt-tests-${process.pid}`);
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      let body = "";
      req.on("data", (c) => (body += c));
      req.on("end", () => {
        posts.push({ path: req.url ?? "", authorization: req.headers.authorization, body: JSON.parse(body || "null") });
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => {
    server.close();
    rmSync(attemptsDir, { recursive: true, force: true });
  });
  beforeEach(() => void posts.splice(0));

  async function configFor(attemptId: string, turns: ScriptedTurn[], progress: boolean): Promise<CompatAttemptConfig> {
    const dirs = await prepareAttemptDirs(attemptsDir, attemptId);
    makeAttemptDirs(dirs);
    return {
      attemptId,
      namespace: "default",
      controllerURL: url,
      token: "compat-attempt-token",
      ...dirs,
      toolSettings: { fetch: { egress: { allowLoopback: false }, timeoutMs: 1000 }, search: { provider: "duckduckgo", timeoutMs: 1000 } },
      endpoint: { name: "offline", type: "scripted", model: "scripted", script: { turns } },
      modelCalls: { retryBaseMs: 1, timeoutMs: 10_000 },
      system: "",
      messages: [{ role: "user", content: "write it" }],
      tools: ["file_read", "file_write"],
      maxTokens: 100,
      turnBudget: 3,
      progress,
    };
  }
  const run = (config: CompatAttemptConfig) => runCompatAttempt(config, { log: () => undefined, signal: new AbortController().signal, transport: httpTransport(config.controllerURL) });

  it("travels as its ORKA_* environment and is read back as a compat assignment", async () => {
    const config = await configFor("compat-env", [{ text: "x" }], true);
    expect(readWorkerEnv(compatAttemptEnv(config))).toEqual({ kind: "compat", config });
  });

  it("runs the tools in its own workspace and sends its progress, then its answer, to its waiting request", async () => {
    const config = await configFor("compat-one", [{ toolCalls: [{ name: "file_write", arguments: { path: "a.txt", content: "hi" } }] }, { text: "wrote a.txt" }], true);
    expect(await run(config)).toEqual({ exitCode: 0 });
    expect(readFileSync(join(config.workspaceDir, "a.txt"), "utf8")).toBe("hi");
    expect(posts.map((p) => [p.path, p.body])).toEqual([
      ["/internal/v1/compat/compat-one/progress", { note: "[Tool file_write completed]" }],
      ["/internal/v1/compat/compat-one/outcome", { answer: { text: "wrote a.txt", usage: { inputTokens: 0, outputTokens: 0 } } }],
    ]);
    expect(posts.every((p) => p.authorization === "Bearer compat-attempt-token")).toBe(true);
  });

  it("sends no progress to a client that does not stream, and reports a failure with the reason", async () => {
    const looping = { toolCalls: [{ name: "file_read", arguments: { path: "none.txt" } }] };
    const config = await configFor("compat-two", [looping, looping, looping], false);
    expect(await run(config)).toEqual({ exitCode: 1, reason: "max iterations reached without completion" });
    expect(posts.map((p) => [p.path, p.body])).toEqual([["/internal/v1/compat/compat-two/outcome", { error: { message: "max iterations reached without completion" } }]]);
  });
});
