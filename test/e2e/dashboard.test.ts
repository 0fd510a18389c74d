import { mkdirSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startOrkaServer, type OrkaUnderTest } from "../helpers/orka-server.ts";
import { launchChromium } from "../helpers/browser.ts";
import { approvalGatedDeployer } from "../fixtures/deployer.ts";

// ORKA_UPDATE_SCREENSHOTS=1 refreshes the README's screenshots; otherwise they go to a temp dir.
const SCREENSHOTS = process.env.ORKA_UPDATE_SCREENSHOTS === "1" ? resolve(import.meta.dirname, "../../docs/screenshots") : mkdtempSync(join(tmpdir(), "orka-shots-"));

// Everything offline: scripted models for a coordinator, its researchers and a deployer that needs approval.
const resources = (orkaUrl: string) => `
apiVersion: core.orka.ai/v1alpha1
kind: Provider
metadata: {name: planner-script}
spec:
  type: scripted
  scripted:
    turns:
      - toolCalls:
          - {name: delegate_task, arguments: {agent: researcher, prompt: "Find the release date"}}
          - {name: delegate_task, arguments: {agent: researcher, prompt: "Find the changelog"}}
          - {name: update_plan, arguments: {summary: "two questions delegated", plan_document: "1. date\\n2. changelog", progress_pct: 50}}
      - text: Both questions are delegated to researchers.
---
apiVersion: core.orka.ai/v1alpha1
kind: Provider
metadata: {name: researcher-script}
spec:
  type: scripted
  scripted:
    turns:
      - toolCalls:
          - {name: remember, arguments: {title: Release cadence, content: Releases ship on Tuesdays., tags: [release]}}
      - text: Releases ship on Tuesdays.
---
apiVersion: core.orka.ai/v1alpha1
kind: Agent
metadata: {name: researcher}
spec: {providerRef: {name: researcher-script}, systemPrompt: {inline: You research one question.}}
---
apiVersion: core.orka.ai/v1alpha1
kind: Agent
metadata: {name: planner}
spec:
  providerRef: {name: planner-script}
  systemPrompt: {inline: You split work between researchers.}
  coordination: {enabled: true, allowedAgents: [{name: researcher}]}
---
${approvalGatedDeployer(orkaUrl, "iteration over")}`;

const COORDINATOR_YAML = `apiVersion: core.orka.ai/v1alpha1
kind: Task
metadata:
  name: release-research
spec:
  type: ai
  agentRef: {name: planner}
  prompt: When is the next release, and what changed?
`;

describe("dashboard in a real browser", () => {
  let orka: OrkaUnderTest;
  let browser: Browser;
  let page: Page;
  const consoleErrors: string[] = [];
  const nav = (name: string) => page.getByRole("navigation", { name: "Main" }).getByRole("link", { name, exact: true });
  const shoot = (name: string) => page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });

  beforeAll(async () => {
    mkdirSync(SCREENSHOTS, { recursive: true });
    orka = await startOrkaServer({ ORKA_ALLOW_LOOPBACK_EGRESS: "true" }); // the deploy Tool calls this server
    const applied = await orka.cli(["apply", "-f", "-"], resources(orka.url));
    if (applied.code !== 0) throw new Error(applied.stderr);
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1360, height: 900 } });
    page.on("console", (message) => {
      if (message.type() === "error") consoleErrors.push(message.text());
    });
    page.setDefaultTimeout(15_000);
  });
  afterAll(async () => {
    await browser?.close();
    await orka?.stop();
  });

  it("refuses a wrong token and signs in with a good one", async () => {
    await page.goto(`${orka.url}/`);
    await shoot("login");
    await page.getByLabel("API token").fill("not-a-real-token");
    await page.getByRole("button", { name: "Sign in" }).click();
    await expect.poll(() => page.getByRole("alert").textContent()).toContain("invalid token");
    await page.getByLabel("API token").fill(orka.token);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("heading", { name: "Overview" }).waitFor();
  });

  it("creates a coordinator Task from YAML and shows its children appear and finish in the tree", async () => {
    await nav("Tasks").click();
    await page.getByRole("button", { name: "New task" }).click();
    await page.getByRole("button", { name: "YAML" }).click();
    await page.getByLabel("Task YAML").fill(COORDINATOR_YAML);
    await shoot("task-create");
    await page.getByRole("button", { name: "Create task" }).click();
    await page.waitForURL(/\/tasks\/release-research$/);

    const nodes = page.locator(".tree > .tree-node");
    await expect.poll(() => nodes.count(), { timeout: 20_000 }).toBe(2);
    await expect.poll(async () => (await nodes.allTextContents()).filter((t) => t.includes("Succeeded")).length, { timeout: 20_000 }).toBe(2);
    await expect.poll(() => page.locator("h1 .badge").textContent(), { timeout: 20_000 }).toBe("Succeeded");
    await page.getByText("Both questions are delegated to researchers.").first().waitFor();
    await page.getByText("complete", { exact: true }).waitFor();

    // A tool call opens to its exact arguments and result.
    const call = page.locator(".tool-call", { hasText: "delegate_task" }).first();
    await call.locator("summary").click();
    await expect.poll(() => call.locator(".tool-io").textContent()).toContain('"agent": "researcher"');
    await expect.poll(() => call.locator(".tool-io").textContent()).toContain('"status": "created"');
    await shoot("task-detail");

    await nav("Tasks").click();
    await page.locator("table").getByText("release-research").first().waitFor();
    await shoot("tasks");
    await nav("Overview").click();
    await expect.poll(() => page.locator(".stat.phase-succeeded .stat-value").textContent()).toBe("3");
    await shoot("overview");
  });

  it("shows each Task's own events only, through the delegation tree and from Task to Task", async () => {
    // Event numbers are unique across Tasks, so the rows' numbers tell whose events a timeline shows.
    const shownSeqs = () =>
      page.locator(".timeline > li").evaluateAll((rows) => rows.flatMap((row) => (row.getAttribute("data-seqs") ?? "").split(" ").filter(Boolean).map(Number)).sort((a, b) => a - b));
    const showsOnlyItsOwnEvents = async (name: string) => {
      await page.waitForURL(new RegExp(`/tasks/${name}$`));
      await expect.poll(() => page.locator("h1").first().textContent()).toContain(name);
      const own = (await orka.api("GET", `/api/v1/tasks/${name}/events?limit=500`)).body.events.map((e: { seq: number }) => e.seq);
      expect(own.length).toBeGreaterThan(2);
      await expect.poll(shownSeqs, { timeout: 10_000 }).toEqual(own);
    };
    const [first, second] = (await orka.api("GET", "/api/v1/tasks/release-research/children")).body.items.map((t: { metadata: { name: string } }) => t.metadata.name);
    const treeLink = (child: string) => page.locator(`.tree-node[data-task="${child}"] > a`);

    await nav("Tasks").click();
    await page.locator("table").getByRole("link", { name: "release-research", exact: true }).click();
    await showsOnlyItsOwnEvents("release-research");
    await treeLink(first).click();
    await showsOnlyItsOwnEvents(first);
    await page.goBack();
    await showsOnlyItsOwnEvents("release-research");
    await treeLink(second).click();
    await showsOnlyItsOwnEvents(second);
    await page.locator(".crumbs").getByRole("link", { name: "Tasks" }).click();
    await page.locator("table").getByRole("link", { name: first, exact: true }).click();
    await showsOnlyItsOwnEvents(first);
  });

  it("shows each event's journal step, the number `orka task fork --at` takes", async () => {
    await page.goto(`${orka.url}/tasks/release-research`);
    const events: { seq: number; type: string; journalRun?: number; journalStep?: number }[] = (await orka.api("GET", "/api/v1/tasks/release-research/events?limit=500")).body.events;
    // A tool call's row shows where it started; its end shares the row.
    const rowHeads = events.filter((e) => e.journalStep !== undefined && !/^ToolCall(Completed|Failed|Rejected)$/.test(e.type));
    expect(rowHeads.length).toBeGreaterThan(3);
    for (const event of rowHeads) {
      const row = page.locator(`.timeline > li[data-seqs~="${event.seq}"]`);
      await expect.poll(() => row.locator(".event-step").first().textContent()).toBe(`run ${event.journalRun} · step ${event.journalStep}`);
    }
  });

  it("follows the Overview's counts without listing every Task again", async () => {
    const taskRequests: string[] = [];
    page.on("request", (request) => {
      const url = new URL(request.url());
      if (/^\/api\/v1\/(tasks|watch\/tasks|task-summary)$/.test(url.pathname)) taskRequests.push(`${url.pathname}${url.search}`);
    });
    await nav("Overview").click();
    await expect.poll(() => page.locator(".stat.phase-succeeded .stat-value").textContent()).toBe("3");
    // A Task created elsewhere reaches the page through the watch, which then asks for the summary again.
    const created = await orka.api("POST", "/api/v1/tasks", { name: "seen-by-overview", type: "ai", agentRef: "researcher", prompt: "When is the release?" });
    expect(created.status).toBe(201);
    await page.locator(".card", { hasText: "Recent tasks" }).getByRole("link", { name: "seen-by-overview" }).waitFor();
    await orka.waitFor("seen-by-overview");
    await expect.poll(() => page.locator(".stat.phase-succeeded .stat-value").textContent()).toBe("4");
    const afterChanges = taskRequests.length;
    await page.waitForTimeout(4000);
    // Nothing is asked while nothing changes, no list of Tasks is ever asked for, and the watch starts at the summary's position.
    expect(taskRequests).toHaveLength(afterChanges);
    expect(taskRequests.filter((url) => url.startsWith("/api/v1/tasks"))).toEqual([]);
    expect(taskRequests.filter((url) => url.startsWith("/api/v1/watch/tasks"))).toEqual([expect.stringMatching(/^\/api\/v1\/watch\/tasks\?(.*&)?resourceVersion=\d+(&|$)/)]);
    // One summary to start, then at most one per second of changes (the new Task is written a handful of times).
    const summaries = taskRequests.filter((url) => url.startsWith("/api/v1/task-summary")).length;
    expect(summaries).toBeGreaterThanOrEqual(2);
    expect(summaries).toBeLessThanOrEqual(8);
  });

  it("pages the Tasks table with the list's continue tokens", async () => {
    const names = Array.from({ length: 52 }, (_, i) => `zz-paged-${String(i).padStart(2, "0")}`);
    for (const name of names) expect((await orka.api("POST", "/api/v1/tasks", { name, type: "ai", agentRef: "researcher", prompt: "wait", suspend: true })).status).toBe(201);
    const listRequests: string[] = [];
    const onRequest = (request: { url(): string }) => {
      const url = new URL(request.url());
      if (url.pathname === "/api/v1/tasks") listRequests.push(url.search);
    };
    page.on("request", onRequest);
    await nav("Tasks").click();
    const rows = page.locator("table tbody tr");
    await expect.poll(() => rows.count()).toBe(50);
    await page.getByRole("button", { name: "Next →" }).click();
    await page.getByText("Page 2").waitFor();
    const total = (await orka.api("GET", "/api/v1/tasks?limit=0")).body.items.length;
    await expect.poll(() => rows.count()).toBe(total - 50);
    await page.locator("table").getByRole("link", { name: names.at(-1)!, exact: true }).waitFor();
    await page.getByRole("button", { name: "← Previous" }).click();
    await expect.poll(() => rows.count()).toBe(50);
    page.off("request", onRequest);
    expect(listRequests.length).toBeGreaterThanOrEqual(2);
    expect(listRequests.every((search) => new URLSearchParams(search).get("limit") === "50")).toBe(true);
    expect(listRequests.some((search) => new URLSearchParams(search).get("continue"))).toBe(true);
  });

  it("approves a pending approval, after which the Task runs the approved call and finishes", async () => {
    const created = await orka.api("POST", "/api/v1/tasks", { name: "ship-it", type: "ai", agentRef: "deployer", prompt: "Deploy 1.4.2" });
    expect(created.status).toBe(201);
    await nav("Approvals").click();
    const card = page.locator(".card", { hasText: "Execute deploy" });
    await card.waitFor({ timeout: 20_000 });
    await expect.poll(() => card.textContent()).toContain('"version": "1.4.2"');
    await expect.poll(() => card.textContent()).toContain("ship-it");
    await shoot("approvals");
    await card.getByLabel("Reason").fill("release window is open");
    await card.getByRole("button", { name: "Approve" }).click();
    const done = await orka.waitFor("ship-it", ["Succeeded", "Failed"], 30_000);
    expect(done.status).toMatchObject({ phase: "Succeeded" });
    const [approval] = (await orka.api("GET", "/api/v1/tasks/ship-it/approvals")).body.approvals;
    expect(approval).toMatchObject({ status: "approved", decisionActor: "admin", decisionReason: "release window is open" });
    await page.locator(".card", { hasText: "Recently decided" }).getByText("release window is open").waitFor();
  });

  it("reviews and applies a memory proposal; the memory then exists", async () => {
    await nav("Memory").click();
    const proposal = page.locator(".proposal", { hasText: "Release cadence" }).first();
    await proposal.waitFor();
    await shoot("memory");
    await proposal.getByRole("button", { name: "Accept" }).click();
    await page.getByRole("button", { name: "accepted", exact: true }).click();
    const accepted = page.locator(".proposal", { hasText: "Release cadence" }).first();
    await accepted.getByRole("button", { name: "Apply" }).click();
    await page.locator("table").getByText("Releases ship on Tuesdays.").waitFor();
    const memories = (await orka.api("GET", "/api/v1/memories")).body.items;
    expect(memories.map((m: any) => m.content)).toEqual(["Releases ship on Tuesdays."]);
  });

  it("shows agents, providers and tools without any secret, and every page renders", async () => {
    for (const [link, heading, name] of [["Agents", "Agents", "agents"], ["Providers", "Providers", "providers"], ["Tools", "Tools", "tools"], ["Sessions", "Sessions", "sessions"], ["Chat", "Chat", "chat"]]) {
      await nav(link).click();
      await page.getByRole("heading", { name: heading, exact: true }).waitFor();
      await page.locator(".state.loading").waitFor({ state: "detached" }).catch(() => undefined);
      await shoot(name);
    }
    await nav("Tools").click();
    const webFetch = page.locator(".card", { hasText: "web_fetch" });
    await webFetch.getByText("parameters").click();
    await expect.poll(() => webFetch.textContent()).toContain('"url"');
    await page.goto(`${orka.url}/tasks/no-such-task`);
    await page.getByRole("alert").filter({ hasText: "task not found" }).waitFor();
    // The only failed loads are the refused sign-in (401) and the missing Task (404): no script errors.
    expect(consoleErrors.filter((e) => !/Failed to load resource: .* (401|404)/.test(e))).toEqual([]);
    expect(consoleErrors.filter((e) => e.includes("404"))).toHaveLength(1);
  });

  it("goes back to sign-in when the token stops working", async () => {
    await page.evaluate(() => localStorage.setItem("orka.token", "revoked-token"));
    await page.goto(`${orka.url}/tasks`);
    await page.getByLabel("API token").waitFor();
  });
});
