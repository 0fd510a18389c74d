import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SqliteApprovalStore } from "../../src/store/sqlite/approval-store.ts";
import { tempStore } from "../helpers/store.ts";

describe("the approval store", () => {
  let store: ReturnType<typeof tempStore>;
  let approvals: SqliteApprovalStore;
  beforeEach(() => {
    store = tempStore();
    approvals = new SqliteApprovalStore(store.db);
  });
  afterEach(() => store.close());

  const ask = (id: string, task: string, tool: string) =>
    approvals.request({
      id, namespace: "default", taskName: task, taskUID: `${task}-uid`, iteration: 1, action: `Execute ${tool}`, targetTool: tool,
      targetArgsDigest: "a", targetSpecDigest: "s", targetArgsPreview: "{}", severity: "warning",
    });

  it("knows whether anyone was asked about a Task's calls of a Tool", () => {
    for (let i = 0; i < 50; i++) ask(`other-${i}`, `other-${i}`, "payment");
    expect(approvals.askedFor("default", "pay-run", "payment")).toBe(false);
    ask("one", "pay-run", "payment");
    expect(approvals.askedFor("default", "pay-run", "payment")).toBe(true);
    expect(approvals.askedFor("default", "pay-run", "refund")).toBe(false);
    expect(approvals.askedFor("elsewhere", "pay-run", "payment")).toBe(false);
  });
});
