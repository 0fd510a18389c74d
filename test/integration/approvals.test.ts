import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { toolResultsOf, type LlmPeer } from "../peers/llm-server.ts";
import type { OrkaUnderTest } from "../helpers/orka-server.ts";
import { startOrkaWithPeer } from "../helpers/orka-with-peer.ts";

const iterationOf = (body: any) => Number(/Current iteration: (\d+)/.exec(body.messages[0].content)![1]);
const promptOf = (body: any) => body.messages[1].content as string;

// Human approval of exact custom-tool calls, with a real HTTP Tool listener.
describe("human approvals", () => {
  let orka: OrkaUnderTest;
  let peer: LlmPeer;
  let stop: () => Promise<void>;
  let listener: http.Server;
  const payments: any[] = [];

  beforeAll(async () => {
    listener = http.createServer((req, res) => {
      let raw = "";
      req.on("data", (c) => (raw += c));
      req.on("end", () => {
        if (req.method === "POST") payments.push(JSON.parse(raw));
        res.writeHead(200, { "content-type": "application/json" }).end('{"paid":true}');
      });
    });
    await new Promise<void>((r) => listener.listen(0, "127.0.0.1", r));
    const url = `http://127.0.0.1:${(listener.address() as AddressInfo).port}/pay`;
    ({ orka, peer, stop } = await startOrkaWithPeer(`
apiVersion: core.orka.ai/v1alpha1
kind: Tool
metadata: {name: payment}
spec:
  description: Pay an amount
  parameters: {type: object, properties: {amount: {type: integer}}, required: [amount]}
  http: {url: "${url}"}
---
apiVersion: core.orka.ai/v1alpha1
kind: Agent
metadata: {name: treasurer}
spec:
  providerRef: {name: peer}
  model: {name: m-treasurer}
  tools: [{name: payment}]
  coordination: {enabled: true, autonomous: true, maxIterations: 5, approvalRequiredTools: [payment]}
---
apiVersion: core.orka.ai/v1alpha1
kind: Agent
metadata: {name: asker}
spec:
  providerRef: {name: peer}
  model: {name: m-asker}
  tools: [{name: payment}]
  coordination: {enabled: true, autonomous: true, maxIterations: 5}
---
apiVersion: core.orka.ai/v1alpha1
kind: Agent
metadata: {name: hasty}
spec:
  providerRef: {name: peer}
  model: {name: m-hasty}
  tools: [{name: payment}]
  coordination: {enabled: true, autonomous: true, maxIterations: 5, approvalRequiredTools: [payment], approvalTimeout: 1s}
`, { ORKA_ALLOW_LOOPBACK_EGRESS: "true" }));
  });
  afterAll(async () => {
    await stop();
    listener.close();
  });

  const waitForMessage = async (name: string, pattern: RegExp) => {
    for (let i = 0; i < 200; i++) {
      const task = (await orka.api("GET", `/api/v1/tasks/${name}`)).body;
      if (pattern.test(task.status?.message ?? "")) return task;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`task ${name} never matched ${pattern}`);
  };

  it("parks a gated call, runs it exactly once with the idempotency key after approval; changed arguments need a new approval", async () => {
    peer.script("m-treasurer", [
      (body) =>
        iterationOf(body) === 1
          ? { toolCalls: [{ name: "payment", arguments: { amount: 5 } }, { name: "update_plan", arguments: { summary: "never reached", plan_document: "x" } }] }
          : iterationOf(body) === 2
            ? { toolCalls: [{ name: "payment", arguments: { amount: 5 } }, { name: "payment", arguments: { amount: 6 } }] }
            : { toolCalls: [{ name: "update_plan", arguments: { summary: "paid", plan_document: "paid 5", goal_complete: true } }] },
      { text: "iteration over" },
    ]);
    await orka.api("POST", "/api/v1/tasks", { name: "pay-run", type: "ai", agentRef: "treasurer", prompt: "pay 5" });
    const parked = await waitForMessage("pay-run", /^waiting for approval /);
    expect(parked.status.phase).toBe("Running");
    expect(parked.status.conditions.find((c: any) => c.type === "WaitingForApproval")).toMatchObject({ status: "True" });
    expect(payments).toEqual([]);

    const { approvals } = (await orka.api("GET", "/api/v1/tasks/pay-run/approvals")).body;
    expect(approvals).toHaveLength(1);
    const [approval] = approvals;
    expect(approval).toMatchObject({ targetTool: "payment", status: "pending", action: "Execute payment", severity: "warning", targetArgsPreview: '{"amount":5}' });
    expect(parked.status.message).toBe(`waiting for approval ${approval.id} for payment at iteration 0`);
    const pending = (await orka.api("GET", "/api/v1/approvals?status=pending")).body.approvals;
    expect(pending.map((a: any) => [a.id, a.taskName])).toEqual([[approval.id, "pay-run"]]);
    expect((await orka.api("GET", "/api/v1/approvals?status=maybe")).status).toBe(400);
    expect((await orka.api("POST", `/api/v1/tasks/pay-run/approvals/${approval.id}/decision`, { decision: "maybe" })).body.error).toEqual({ code: 400, message: "decision must be approve or decline" });

    expect((await orka.cli(["task", "approvals", "pay-run"])).stdout).toMatch(new RegExp(`${approval.id.slice(0, 16)}\\s+pending\\s+payment\\s+warning`));
    const approved = await orka.cli(["task", "approve", "pay-run", approval.id.slice(0, 10), "--reason", "fine"]);
    expect(approved.stdout.trim()).toBe(`approval ${approval.id} approved`);
    const decided = { body: (await orka.api("GET", "/api/v1/tasks/pay-run/approvals")).body.approvals[0] };
    expect(decided.body).toMatchObject({ status: "approved", decisionActor: "admin", decisionReason: "fine" });
    expect((await orka.api("POST", `/api/v1/tasks/pay-run/approvals/${approval.id}/decision`, { decision: "approved" })).status).toBe(200);
    expect((await orka.api("POST", `/api/v1/tasks/pay-run/approvals/${approval.id}/decision`, { decision: "decline" })).body.error).toEqual({ code: 409, message: "approval is already approved" });

    // Iteration 2 pays 5 once, then asking for 6 parks the Task again under a new approval.
    const reparked = await waitForMessage("pay-run", /^waiting for approval .* at iteration 1$/);
    const changed = (await orka.api("GET", "/api/v1/tasks/pay-run/approvals")).body.approvals.find((a: any) => a.status === "pending");
    expect(changed.id).not.toBe(approval.id);
    expect(changed.targetArgsPreview).toBe('{"amount":6}');
    expect(reparked.status.message).toBe(`waiting for approval ${changed.id} for payment at iteration 1`);
    expect(payments).toEqual([{ amount: 5, idempotencyKey: approval.id }]);
    expect((await orka.cli(["task", "decline", "pay-run", changed.id, "--reason", "no"])).stdout.trim()).toBe(`approval ${changed.id} declined`);

    const done = await orka.waitFor("pay-run", ["Succeeded", "Failed"], 30_000);
    expect(done.status.message).toBe("goal complete after 3 iterations: paid");
    expect(payments).toEqual([{ amount: 5, idempotencyKey: approval.id }]);
    const second = peer.requests.filter((r) => r.body.model === "m-treasurer" && iterationOf(r.body) === 2)[0].body;
    expect(promptOf(second)).toContain(`- APPROVED ${approval.id} for payment by admin`);
    expect((await orka.api("POST", `/api/v1/tasks/pay-run/approvals/${approval.id}/decision`, { decision: "approve" })).status).toBe(200);
  });

  it("asks with request_approval; after a decline the call is refused and nothing is paid", async () => {
    peer.script("m-asker", [
      (body) =>
        iterationOf(body) === 1
          ? { toolCalls: [{ name: "request_approval", arguments: { action: "Pay 9", targetTool: "payment", targetArguments: { amount: 9 }, riskSummary: "money leaves", severity: "critical" } }] }
          : { toolCalls: [{ name: "payment", arguments: { amount: 9 } }, { name: "update_plan", arguments: { summary: "gave up", plan_document: "declined", goal_complete: true } }] },
      { text: "over" },
    ]);
    await orka.api("POST", "/api/v1/tasks", { name: "ask-run", type: "ai", agentRef: "asker", prompt: "pay 9 if allowed" });
    await waitForMessage("ask-run", /^waiting for approval /);
    const [approval] = (await orka.api("GET", "/api/v1/tasks/ask-run/approvals")).body.approvals;
    expect(approval).toMatchObject({ action: "Pay 9", riskSummary: "money leaves", severity: "critical", status: "pending" });
    await orka.api("POST", `/api/v1/tasks/ask-run/approvals/${approval.id}/decision`, { decision: "decline", reason: "too much" });
    const done = await orka.waitFor("ask-run", ["Succeeded", "Failed"], 30_000);
    expect(done.status.phase).toBe("Succeeded");
    const secondIteration = peer.requests.filter((r) => r.body.model === "m-asker" && iterationOf(r.body) === 2);
    const results = toolResultsOf(secondIteration.at(-1)!.body);
    expect(results[0]).toBe(`Error executing tool: Not executed because approval ${approval.id} for payment is declined`);
    expect(payments.some((p) => p.amount === 9)).toBe(false);
    expect((await orka.api("POST", `/api/v1/tasks/ask-run/approvals/${approval.id}/decision`, { decision: "approve" })).body.error).toEqual({ code: 409, message: "approval is already declined" });
    // The iteration ended right after the request, so its result is in the events, not in a later model turn.
    const completed = (await orka.api("GET", "/api/v1/tasks/ask-run/events?type=ToolCallCompleted")).body.events.find((e: any) => e.toolName === "request_approval");
    expect(JSON.parse(completed.content)).toMatchObject({ success: true, data: { approvalID: approval.id, targetTool: "payment", status: "pending" } });
  });

  it("refuses built-in targets", async () => {
    peer.script("m-asker", [
      (body) => (iterationOf(body) === 1 ? { toolCalls: [{ name: "request_approval", arguments: { action: "x", targetTool: "code_exec", targetArguments: {} } }, { name: "update_plan", arguments: { summary: "s", plan_document: "d", goal_complete: true } }] } : { text: "?" }),
      { text: "over" },
    ]);
    await orka.api("POST", "/api/v1/tasks", { name: "builtin-ask", type: "ai", agentRef: "asker", prompt: "x" });
    await orka.waitFor("builtin-ask", ["Succeeded", "Failed"], 30_000);
    const results = toolResultsOf(peer.requests.filter((r) => r.body.model === "m-asker" && promptOf(r.body) === "x").at(-1)!.body);
    expect(results[0]).toBe('Error executing tool: targetTool "code_exec" is a built-in tool and cannot be approved with request_approval');
  });

  it("expires an approval nobody decided, like a decline", async () => {
    peer.script("m-hasty", [
      (body) =>
        iterationOf(body) === 1
          ? { toolCalls: [{ name: "payment", arguments: { amount: 77 } }] }
          : { toolCalls: [{ name: "payment", arguments: { amount: 77 } }, { name: "update_plan", arguments: { summary: "expired", plan_document: "x", goal_complete: true } }] },
      { text: "over" },
    ]);
    await orka.api("POST", "/api/v1/tasks", { name: "hasty-run", type: "ai", agentRef: "hasty", prompt: "pay 77" });
    const done = await orka.waitFor("hasty-run", ["Succeeded", "Failed"], 30_000);
    expect(done.status.message).toBe("goal complete after 2 iterations: expired");
    const [approval] = (await orka.api("GET", "/api/v1/tasks/hasty-run/approvals")).body.approvals;
    expect(approval).toMatchObject({ status: "expired", decisionActor: "orka" });
    expect((await orka.api("GET", "/api/v1/tasks/hasty-run/events?type=ApprovalExpired")).body.events).toHaveLength(1);
    expect(payments.some((p) => p.amount === 77)).toBe(false);
  });
});
