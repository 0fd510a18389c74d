import { describe, expect, it } from "vitest";
import { bindApproval } from "../../src/policy/approvals.ts";
import type { Resource } from "../../src/resources/meta.ts";
import type { ToolSpec } from "../../src/resources/tool.ts";

const target = { namespace: "default", task: "pay-run", taskUID: "uid-1" };
const tool = (spec: ToolSpec): Resource<ToolSpec, unknown> => ({ apiVersion: "core.orka.ai/v1alpha1", kind: "Tool", metadata: { name: "everything", namespace: "default" }, spec });
const mcp = tool({ description: "an MCP server", mcp: { url: "https://mcp.example/mcp" } } as ToolSpec);

describe("an approval's binding", () => {
  it("names one call of an MCP Tool: the same arguments to another of its server's tools are another call", () => {
    const args = { message: "needs a yes" };
    const echo = bindApproval(target, mcp, args, "echo");
    expect(bindApproval(target, mcp, { ...args }, "echo").id).toBe(echo.id);
    expect(bindApproval(target, mcp, args, "get-env").id).not.toBe(echo.id);
    expect(bindApproval(target, mcp, args).id).not.toBe(echo.id);
    expect(echo.preview).toBe('{"message":"needs a yes"}');
  });

  it("changes with the Task, the arguments and the Tool's spec, not with the arguments' order", () => {
    const http = tool({ description: "pay", http: { url: "https://pay.example/{{account}}" } } as ToolSpec);
    const base = bindApproval(target, http, { account: "a1", amount: 9 });
    expect(bindApproval(target, http, { amount: 9, account: "a1" }).id).toBe(base.id);
    expect(bindApproval({ ...target, taskUID: "uid-2" }, http, { account: "a1", amount: 9 }).id).not.toBe(base.id);
    expect(bindApproval(target, http, { account: "a2", amount: 9 }).id).not.toBe(base.id);
    expect(bindApproval(target, tool({ description: "pay", http: { url: "https://elsewhere.example/{{account}}" } } as ToolSpec), { account: "a1", amount: 9 }).id).not.toBe(base.id);
    expect(() => bindApproval(target, http, { __orkaApprovalURL: "x" })).toThrow("__orkaApprovalURL is reserved");
  });
});
