import { afterEach, describe, expect, it } from "vitest";
import type { ControlPlane } from "../../src/tools/define.ts";
import { toolHarness } from "../helpers/tools.ts";

const NOTE = "\n[ignored arguments this tool does not take:";

/** A control plane that answers every read with an empty list and remembers the queries. */
function listingControlPlane(queries: Record<string, string | undefined>[]): ControlPlane {
  const plane: ControlPlane = {
    get: async (_path, query = {}) => {
      queries.push(query);
      return [];
    },
    post: async () => ({}),
    delete: async () => ({}),
    withIdempotencyKey: () => plane,
  };
  return plane;
}

// Arguments a tool does not take are ignored, and the model is told which, in the one executor path.
describe("unknown tool arguments", () => {
  let tools: Awaited<ReturnType<typeof toolHarness>>;
  afterEach(() => tools.close());
  const raw = (name: string, args: Record<string, unknown>) => tools.resumeCall(name, args, { key: "k", interrupted: false });

  it("names them after the result, which is otherwise unchanged", async () => {
    tools = await toolHarness();
    const text = await raw("file_write", { path: "a.txt", content: "x", overwrite: true, encoding: "utf8" });
    expect(text.endsWith(`${NOTE} overwrite, encoding]`)).toBe(true);
    expect(JSON.parse(text.slice(0, text.indexOf(NOTE)))).toEqual({ path: "a.txt", size: 1, mode: "write", created: true });
    expect(await raw("file_write", { path: "a.txt", content: "y" })).not.toContain(NOTE);
  });

  it("does not count a known alias as unknown, and names them in refusals and tool errors too", async () => {
    const queries: Record<string, string | undefined>[] = [];
    tools = await toolHarness({}, listingControlPlane(queries));
    expect(await raw("recall_memory", { query: "deploy", taskName: "t-1", namespace: "other" })).toBe(`[]${NOTE} namespace]`);
    expect(queries[0]).toMatchObject({ query: "deploy", taskName: "t-1" });
    await expect(raw("file_read", { path: 42, offset_bytes: 3 })).rejects.toThrow(/^invalid arguments: path: .*\n\[ignored arguments this tool does not take: offset_bytes\]$/s);
    await expect(raw("file_read", { path: "absent.txt", lines: 3 })).rejects.toThrow(`file not found: absent.txt${NOTE} lines]`);
  });

  it("keeps the note short however many a model sends", async () => {
    tools = await toolHarness();
    const flood = Object.fromEntries(Array.from({ length: 1000 }, (_, i) => [`${"k".repeat(100)}${i}`, i]));
    const text = await raw("file_write", { path: "b.txt", content: "x", ...flood });
    const note = text.slice(text.indexOf(NOTE));
    expect(note.endsWith(", and 980 more]")).toBe(true);
    expect(note.length).toBeLessThan(2000);
  });
});
