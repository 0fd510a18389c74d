import { describe, expect, it } from "vitest";
import type { Resource } from "../../src/resources/meta.ts";
import type { ToolSpec, ToolStatus } from "../../src/resources/tool.ts";
import { customToolDigest } from "../../src/runtimes/tool-digest.ts";

function tool(uid: string, generation: number, spec: Record<string, unknown>): Resource<ToolSpec, ToolStatus> {
  return {
    apiVersion: "orka.ai/v1",
    kind: "Tool",
    metadata: { name: "lookup", namespace: "default", uid, generation },
    spec: spec as ToolSpec,
  };
}

describe("a custom Tool's session digest", () => {
  const spec = { description: "Look a thing up", http: { url: "http://tools.local/lookup", method: "POST" } };

  it("is sha256 of the uid, generation and spec, whatever the key order", () => {
    const digest = customToolDigest(tool("u1", 1, spec));
    expect(digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    const reordered = { http: { method: "POST", url: "http://tools.local/lookup" }, description: "Look a thing up" };
    expect(customToolDigest(tool("u1", 1, reordered))).toBe(digest);
  });

  it("changes when the spec is edited, the generation moves or the Tool is recreated", () => {
    const digest = customToolDigest(tool("u1", 1, spec));
    expect(customToolDigest(tool("u1", 1, { ...spec, description: "Look up" }))).not.toBe(digest);
    expect(customToolDigest(tool("u1", 2, spec))).not.toBe(digest);
    expect(customToolDigest(tool("u2", 1, spec))).not.toBe(digest);
  });
});
