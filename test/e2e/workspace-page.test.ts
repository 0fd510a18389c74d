import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Task, TaskSpec, TaskStatus } from "../../src/resources/task.ts";
import type { RunningOrka } from "../../src/server.ts";
import { launchChromium } from "../helpers/browser.ts";
import { EMBEDDED_ADMIN_TOKEN, startEmbeddedOrka } from "../helpers/embedded.ts";
import { startGitPeer, type GitPeer } from "../peers/git-server.ts";

const PUSH = "ghp_pagePUSHER0000000000000000000000001";
const READ = "ghp_pageREADER0000000000000000000000002";

// A Task's page shows the repository it worked in, the commit it started from, the receipt Orka
// verified for its publication, and the pull request once one is recorded.
describe("a Task's workspace on its dashboard page", () => {
  let orka: RunningOrka;
  let git: GitPeer;
  let browser: Browser;
  let page: Page;
  const workDir = mkdtempSync(join(tmpdir(), "orka-page-work-"));
  const api = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${orka.url}/api/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${EMBEDDED_ADMIN_TOKEN}`, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: response.status, body: await response.json() };
  };

  beforeAll(async () => {
    git = await startGitPeer();
    await git.createRepo("o/site", { files: { "index.html": "<h1>hi</h1>\n" }, branch: "main" });
    git.addToken(PUSH, "pusher", { "o/site": "write" });
    git.addToken(READ, "reader", { "o/site": "read" });
    orka = await startEmbeddedOrka({}, { ORKA_GIT_CONFIG: git.clientConfigFile, ORKA_WORK_DIR: workDir });
    for (const [name, token] of [["site-push", PUSH], ["site-read", READ]]) {
      await orka.store.create({ apiVersion: "v1", kind: "Secret", metadata: { name, namespace: "default" }, spec: { type: "Opaque", data: { token } } });
    }
    const turns = [{ toolCalls: [{ name: "file_write", arguments: { path: "index.html", content: "<h1>hello</h1>\n" } }] }, { text: "Greeting fixed." }];
    expect((await api("POST", "/providers", { metadata: { name: "script" }, spec: { type: "scripted", scripted: { turns } } })).status).toBe(201);
    expect((await api("POST", "/agents", { metadata: { name: "coder" }, spec: { providerRef: { name: "script" }, tools: [{ name: "file_write" }] } })).status).toBe(201);
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1360, height: 900 } });
    page.setDefaultTimeout(15_000);
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await orka?.close();
    await git?.close();
    rmSync(workDir, { recursive: true, force: true });
  });

  it("shows the repository, branch and base commit, the verified delivery, and the pull request", async () => {
    const workspace = { gitRepo: "https://github.com/o/site", branch: "main", intent: "write", readCredentialRef: "site-read", publicationCredentialRef: "site-push", pushBranch: "orka/greeting" };
    expect((await api("POST", "/tasks", { metadata: { name: "greeting" }, spec: { type: "ai", agentRef: { name: "coder" }, prompt: "fix the greeting", workspace } })).status).toBe(201);
    let task: Task | undefined;
    for (let i = 0; i < 300 && !["Succeeded", "Failed"].includes(task?.status?.phase ?? ""); i++) {
      await new Promise((r) => setTimeout(r, 50));
      task = await orka.store.get<TaskSpec, TaskStatus>("Task", "default", "greeting");
    }
    expect(task?.status?.delivery?.outcome, task?.status?.message).toBe("VerifiedExact");
    const base = task!.status!.workspace!.baseSHA;
    const verified = task!.status!.delivery!.verifiedRemoteSHA!;

    await page.goto(`${orka.url}/`);
    await page.getByLabel("API token").fill(EMBEDDED_ADMIN_TOKEN);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("heading", { name: "Overview" }).waitFor();
    await page.goto(`${orka.url}/tasks/greeting`);
    const facts = page.locator(".workspace-facts");
    await expect.poll(() => facts.textContent()).toContain("VerifiedExact");
    const text = (await facts.textContent())!;
    expect(text).toContain("https://github.com/o/site");
    expect(text).toContain("main");
    expect(text).toContain(base.slice(0, 12));
    expect(text).toContain("orka/greeting");
    expect(text).toContain(verified.slice(0, 12));
    expect(await facts.getByRole("link", { name: /^#/ }).count()).toBe(0);

    // The pull request the GitHub tools record after a verified delivery.
    const prReceipt = { number: 7, url: "https://github.com/o/site/pull/7", state: "open", headSHA: verified, status: "created" as const };
    const current = (await orka.store.get<TaskSpec, TaskStatus>("Task", "default", "greeting"))!;
    await orka.store.updateStatus({ ...current, status: { ...current.status, delivery: { ...current.status!.delivery!, prReceipt } } });
    await page.reload();
    const link = page.locator(".workspace-facts").getByRole("link", { name: "#7" });
    await link.waitFor();
    expect(await link.getAttribute("href")).toBe("https://github.com/o/site/pull/7");
  });
});
