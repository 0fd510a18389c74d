import { describe, expect, it } from "vitest";
import { mcpContentText, mcpModelToolName } from "../../src/tools/custom/mcp-tool.ts";

describe("MCP tool names the model is offered", () => {
  it("join the Tool and the server's tool, with anything outside [a-zA-Z0-9_-] made _", () => {
    expect(mcpModelToolName("files", "read.file/v2")).toBe("files_read_file_v2");
    expect(mcpModelToolName("everything", "get-sum")).toBe("everything_get-sum");
  });

  it("are always valid model tool names, however long or odd the server's name is", () => {
    for (const odd of ["x".repeat(300), "名前", "a b\u0000c", "../../etc"]) {
      expect(mcpModelToolName("tool", odd)).toMatch(/^[a-zA-Z0-9_-]{1,64}$/);
    }
  });
});

describe("the text of an MCP tool result", () => {
  it("joins text parts and names the rest without their bytes", () => {
    const text = mcpContentText([
      { type: "text", text: "first" },
      { type: "image", mimeType: "image/png", data: "AAAA" },
      { type: "resource_link", uri: "file:///a.txt", name: "a" },
      { type: "text", text: "last" },
    ]);
    expect(text).toBe("first\n[image image/png, 3 bytes, not shown]\n[resource link file:///a.txt (a)]\nlast");
    expect(text).not.toContain("AAAA");
  });

  it("falls back to the structured content when there are no parts", () => {
    expect(mcpContentText([], { sum: 3 })).toBe('{\n  "sum": 3\n}');
  });
});
