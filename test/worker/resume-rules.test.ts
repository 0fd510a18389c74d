import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ControlPlane } from "../../src/tools/define.ts";
import { toolHarness } from "../helpers/tools.ts";

/** A control plane that records which calls carried an idempotency key. */
function recordingControlPlane(calls: { path: string; key?: string }[], key?: string): ControlPlane {
  return {
    get: async (path) => {
      calls.push({ path, key });
      return { completed: true, results: [] };
    },
    post: async (path) => {
      calls.push({ path, key });
      return { completed: true, results: [] };
    },
    delete: async (path) => {
      calls.push({ path, key });
      return {};
    },
    withIdempotencyKey: (k) => recordingControlPlane(calls, k),
  };
}

const KEY = "a".repeat(64);

describe("what a resumed attempt does with an interrupted tool call", () => {
  let calls: { path: string; key?: string }[];
  let tools: Awaited<ReturnType<typeof toolHarness>>;
  beforeEach(async () => {
    calls = [];
    tools = await toolHarness({}, recordingControlPlane(calls));
  });
  afterEach(() => tools.close());

  it("sends effects with their idempotency key, but polls and reads without one", async () => {
    await tools.resumeCall("update_plan", { summary: "s", plan_document: "d" }, { key: KEY, interrupted: true });
    await tools.resumeCall("wait_for_tasks", { tasks: ["child"], timeout: "1s" }, { key: KEY, interrupted: true });
    await tools.resumeCall("recall_memory", { query: "x" }, { key: KEY, interrupted: false });
    expect(calls).toEqual([
      { path: "plans/default/tool-test", key: KEY },
      { path: "tasks/default/tool-test/wait", key: undefined },
      { path: "memories/default", key: undefined },
    ]);
  });

  it("runs an interrupted write again, but reports an interrupted append or command as outcome unknown", async () => {
    await tools.call("file_write", { path: "log.txt", content: "one\n" });
    const append = await tools.resumeCall("file_write", { path: "log.txt", content: "two\n", mode: "append" }, { key: KEY, interrupted: true });
    expect(append).toMatch(/^outcome unknown: the worker running this file_write call was lost/);
    const code = await tools.resumeCall("code_exec", { language: "bash", code: "echo run >> /workspace/log.txt" }, { key: KEY, interrupted: true });
    expect(code).toMatch(/^outcome unknown: .* code_exec/);
    expect(readFileSync(join(tools.workspaceDir, "log.txt"), "utf8")).toBe("one\n");
    const write = await tools.resumeCall("file_write", { path: "log.txt", content: "replaced\n" }, { key: KEY, interrupted: true });
    expect(JSON.parse(write)).toEqual({ path: "log.txt", size: 9, mode: "write", created: false });
    expect(readFileSync(join(tools.workspaceDir, "log.txt"), "utf8")).toBe("replaced\n");
  });

  it("answers a write run again after a lost worker as its first run did: created stays true", async () => {
    const first = await tools.resumeCall("file_write", { path: "fresh.txt", content: "v1\n" }, { key: "b".repeat(64), interrupted: false });
    expect(JSON.parse(first)).toMatchObject({ created: true });
    const again = await tools.resumeCall("file_write", { path: "fresh.txt", content: "v1\n" }, { key: "b".repeat(64), interrupted: true });
    expect(again).toBe(first);
    // Another call over the same file did not create it.
    expect(JSON.parse(await tools.resumeCall("file_write", { path: "fresh.txt", content: "v2\n" }, { key: "c".repeat(64), interrupted: false }))).toMatchObject({ created: false });
  });
});
