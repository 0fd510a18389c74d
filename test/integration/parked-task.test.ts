import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startOrkaServer, type OrkaUnderTest } from "../helpers/orka-server.ts";
import { approvalGatedDeployer } from "../fixtures/deployer.ts";

// The deployer's first iteration parks the Task on its approval-gated deploy.
const resources = (orkaUrl: string) => approvalGatedDeployer(orkaUrl, "deployed 1.4.2");

describe("a parked Task says so", () => {
  let orka: OrkaUnderTest;

  beforeAll(async () => {
    // The deploy Tool calls this server on loopback.
    orka = await startOrkaServer({ ORKA_ALLOW_LOOPBACK_EGRESS: "true" });
    const applied = await orka.cli(["apply", "-f", "-"], resources(orka.url));
    if (applied.code !== 0) throw new Error(applied.stderr);
  });
  afterAll(async () => {
    await orka?.stop();
  });

  const parkedApproval = async (name: string) => {
    for (let i = 0; i < 200; i++) {
      const task = (await orka.api("GET", `/api/v1/tasks/${name}`)).body;
      const waiting = task.status?.conditions?.find((c: { type: string }) => c.type === "WaitingForApproval");
      if (waiting?.status === "True") return waiting.message as string;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`task ${name} never parked`);
  };

  it("reads as parked in its events, result and wait, and `task wait` gives the command that approves it", async () => {
    expect((await orka.cli(["task", "create", "--name", "ship-it", "--agent", "deployer", "--prompt", "Deploy 1.4.2"])).code).toBe(0);
    const approval = await parkedApproval("ship-it");
    const [pending] = (await orka.api("GET", "/api/v1/tasks/ship-it/approvals")).body.approvals;
    expect(pending).toMatchObject({ id: approval, status: "pending", targetTool: "deploy" });

    // The worker's last word is that it parked, not that it succeeded.
    const events = await orka.cli(["task", "events", "ship-it"]);
    expect(events.code).toBe(0);
    expect(events.stdout).not.toMatch(/WorkerCompleted\s+attempt succeeded/);
    expect(events.stdout).toMatch(new RegExp(`WorkerParked\\s+attempt ended: approval requested for deploy \\(approvalID ${approval}\\)`));

    // No result yet: the park notice is not one.
    const result = await orka.cli(["task", "result", "ship-it"]);
    expect(result.code).not.toBe(0);
    expect(result.stdout).toBe("");
    expect(result.stderr).toContain(`task/ship-it is waiting for approval ${approval}`);
    expect(result.stderr).not.toContain("parked until a human decides");

    const wait = await orka.cli(["task", "wait", "ship-it", "--timeout", "1s"]);
    expect(wait.code).toBe(2);
    const approve = new RegExp(`approve it with: (orka -n default task approve ship-it ${approval})\\n`).exec(wait.stderr);
    expect(approve, wait.stderr).not.toBeNull();

    // The printed command works as printed.
    const approved = await orka.cli(approve![1].split(" ").slice(1));
    expect(approved).toMatchObject({ code: 0, stdout: `approval ${approval} approved\n` });
    const finished = await orka.cli(["task", "wait", "ship-it", "--timeout", "30s"]);
    expect(finished.code, finished.stderr).toBe(0);
    expect(await orka.cli(["task", "result", "ship-it"])).toMatchObject({ code: 0, stdout: "deployed 1.4.2\n" });
  });
});
