import { existsSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { attemptEnv } from "../../src/runner/attempt-config.ts";
import { prepareAttemptDirs } from "../../src/runner/local/dirs.ts";
import { runFromEnv } from "../../src/worker/run-from-env.ts";
import { httpTransport } from "../../src/worker/transport.ts";
import { scriptedAiAttempt } from "../helpers/attempt-config.ts";
import { startStandInControlPlane } from "../helpers/stand-in-control-plane.ts";

// An ai attempt's directories are named by the runner and made by the worker only when a built-in tool
// is about to run: a loop that calls none (custom Tools run on the control plane) never has them.
describe("an ai attempt's directories", () => {
  let controlPlane: Awaited<ReturnType<typeof startStandInControlPlane>>;
  const attemptsDir = join(tmpdir(), "orka-attempt-dirs-tests");
  beforeAll(async () => {
    controlPlane = await startStandInControlPlane(({ path }, res) => {
      if (path.startsWith("/internal/v1/tools/")) return void res.writeHead(200, { "content-type": "application/json" }).end('{"result":"42"}');
      res.writeHead(204).end();
    });
  });
  afterAll(() => {
    controlPlane.close();
    rmSync(attemptsDir, { recursive: true, force: true });
  });

  async function run(label: string, tools: string[], turns: { text?: string; toolCalls?: { name: string; arguments: Record<string, unknown> }[] }[]) {
    const dirs = await prepareAttemptDirs(attemptsDir, `${label}-${process.pid}`);
    const config = scriptedAiAttempt({ controllerURL: controlPlane.url, dirs, answer: "unused", tools });
    config.ai!.endpoint.script = { turns };
    config.ai!.customTools = [{ name: "lookup", description: "looks up", parameters: { type: "object", properties: {} } }];
    const outcome = await runFromEnv(attemptEnv(config), { log: () => undefined, signal: new AbortController().signal, transport: httpTransport(controlPlane.url) });
    return { outcome, dirs, root: dirname(dirs.workspaceDir) };
  }

  it("are never made when the loop calls only a custom Tool", async () => {
    const { outcome, root } = await run("custom-only", ["lookup"], [{ toolCalls: [{ name: "lookup", arguments: {} }] }, { text: "done" }]);
    expect(outcome).toEqual({ exitCode: 0 });
    expect(controlPlane.seen.some((call) => call.path.startsWith("/internal/v1/tools/default/t/lookup"))).toBe(true);
    expect(existsSync(root)).toBe(false);
  });

  it("are made before the first built-in tool runs, which then works in them", async () => {
    const { outcome, dirs } = await run("built-in", ["file_write"], [{ toolCalls: [{ name: "file_write", arguments: { path: "notes.txt", content: "written" } }] }, { text: "done" }]);
    expect(outcome).toEqual({ exitCode: 0 });
    expect(readFileSync(join(dirs.workspaceDir, "notes.txt"), "utf8")).toBe("written");
    expect(existsSync(dirs.artifactsDir) && existsSync(dirs.tmpDir)).toBe(true);
  });
});
