import http from "node:http";
import type { AddressInfo } from "node:net";
import { rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeAttemptDirs } from "../../src/runner/attempt-dirs.ts";
import { prepareAttemptDirs } from "../../src/runner/local/dirs.ts";
import { runAttempt } from "../../src/worker/attempt.ts";
import { httpTransport } from "../../src/worker/transport.ts";
import { scriptedAiAttempt } from "../helpers/attempt-config.ts";

interface Step {
  seq: number;
  kind: string;
  messages: { role: string; content?: string }[];
}

// The worker against a stand-in control plane: a custom Tool's call carries the place of its result step,
// and when the control plane says it journalled it, the worker writes no step of its own.
describe("a custom Tool call's result step in the worker", () => {
  let server: http.Server;
  let url = "";
  let journalling = true;
  const seen: { path: string; body: string }[] = [];
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      let body = "";
      req.on("data", (c) => (body += c));
      req.on("end", () => {
        seen.push({ path: req.url ?? "", body });
        if (!req.url?.startsWith("/internal/v1/tools/")) return void res.writeHead(204).end();
        const answer = { result: "pong", ...(journalling && JSON.parse(body).resultStep ? { journalled: true } : {}) };
        res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(answer));
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => server.close());

  async function run(name: string): Promise<{ steps: Step[]; toolCall: { resultStep?: unknown } }> {
    seen.splice(0);
    const attemptsDir = join(tmpdir(), "orka-attempt-tests");
    const dirs = await prepareAttemptDirs(attemptsDir, `${name}-${process.pid}`);
    makeAttemptDirs(dirs);
    const config = scriptedAiAttempt({ controllerURL: url, dirs, answer: "done: {{toolResult}}", tools: ["ping"] });
    config.ai!.customTools = [{ name: "ping", description: "ping", parameters: { type: "object", properties: {} } }];
    config.ai!.endpoint.script = { turns: [{ toolCalls: [{ name: "ping", arguments: {} }] }, { text: "done: {{toolResult}}" }] };
    try {
      expect(await runAttempt(config, { log: () => undefined, signal: new AbortController().signal, transport: httpTransport(url) })).toEqual({ exitCode: 0 });
    } finally {
      rmSync(join(attemptsDir, `${name}-${process.pid}`), { recursive: true, force: true });
    }
    expect(seen.find((r) => r.path === "/internal/v1/results/default/t")?.body).toBe("done: pong");
    return {
      steps: seen.filter((r) => r.path.startsWith("/internal/v1/journal/")).map((r) => JSON.parse(r.body) as Step),
      toolCall: JSON.parse(seen.find((r) => r.path.startsWith("/internal/v1/tools/"))!.body),
    };
  }

  it("sends the place of the result with the call, writes no step for it, and goes on after it", async () => {
    journalling = true;
    const { steps, toolCall } = await run("journalled");
    expect(toolCall.resultStep).toEqual({ run: 1, seq: 3, toolCallId: "call_1_1" });
    // request, answer with the call, (step 3 written by the control plane), final answer.
    expect(steps.map((s) => [s.seq, s.kind])).toEqual([[1, "request"], [2, "response"], [4, "response"]]);
  });

  it("writes the step itself when the control plane did not", async () => {
    journalling = false;
    const { steps } = await run("not-journalled");
    expect(steps.map((s) => [s.seq, s.kind])).toEqual([[1, "request"], [2, "response"], [3, "tool_result"], [4, "response"]]);
    expect(steps[2].messages).toEqual([{ role: "tool", toolCallId: "call_1_1", name: "ping", content: "pong" }]);
  });
});
