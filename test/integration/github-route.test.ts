import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashToken } from "../../src/store/data-store.ts";
import { API_VERSION } from "../../src/resources/meta.ts";
import type { RunningOrka } from "../../src/server.ts";
import { startEmbeddedOrka } from "../helpers/embedded.ts";
import { startGithubPeer, type GithubPeer } from "../peers/github-server.ts";

const REPO = "acme/widgets";

// The server half of the GitHub tools, called as a worker calls it: only with the attempt's token, only for
// tools the attempt was given, only with the tool's own arguments, and a keyed write at most once.
describe("GitHub tool route", () => {
  let orka: RunningOrka;
  let github: GithubPeer;
  let issue: number;
  const token = "attempt-token-for-gh-task";
  const post = (tool: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${orka.url}/internal/v1/github/default/gh-task/${tool}`, {
      method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json", ...headers }, body: JSON.stringify(body),
    }).then(async (r) => ({ status: r.status, body: (await r.json()) as any }));

  beforeAll(async () => {
    github = await startGithubPeer();
    github.addToken("forge-token-0123456789", "forger", "write");
    await github.addRepo(REPO);
    issue = github.addIssue(REPO, { title: "bug", user: "dev" });
    orka = await startEmbeddedOrka({}, { ORKA_GITHUB_API_BASE_URL: github.baseUrl });
    await orka.store.create({ apiVersion: "v1", kind: "Secret", metadata: { name: "gh-forge", namespace: "default" }, spec: { type: "Opaque", data: { token: "forge-token-0123456789" } } });
    // A yearly schedule: the controller leaves the Task alone, so only this test's attempt acts for it.
    const task = await orka.store.create({
      apiVersion: API_VERSION, kind: "Task", metadata: { name: "gh-task", namespace: "default" },
      spec: { type: "container", command: ["true"], priority: 500, schedule: "0 0 1 1 *", workspace: { gitRepo: `https://github.com/${REPO}`, forgeCredentialRef: "gh-forge" } },
    });
    orka.data.createAttempt({ id: "gh-1", namespace: "default", task: "gh-task", taskUid: task.metadata.uid!, number: 1, allowedTools: ["comment_on_issue"] }, hashToken(token));
  });
  afterAll(async () => {
    await orka.close();
    await github.stop();
  });

  it("refuses a tool the attempt was not given, an unknown tool and arguments the tool does not take, before calling GitHub", async () => {
    const start = github.log.length;
    expect(await post("list_issues", {})).toEqual({ status: 403, body: { error: { code: 403, message: 'tool "list_issues" was not enabled for this task' } } });
    expect((await post("delete_repository", {})).status).toBe(404);
    const extra = await post("comment_on_issue", { issue_number: issue, body: "hi", labels: ["x"] });
    expect([extra.status, extra.body.error.message]).toEqual([400, 'unknown field "labels": remove it or correct the spelling']);
    const badUrl = await post("comment_on_issue", { issue_number: issue, body: "hi", repo_url: "https://x-access-token:abc@example.com/acme/widgets" });
    expect([badUrl.status, badUrl.body.error.message]).toEqual([400, "unsupported GitHub URL format: https://example.com/acme/widgets"]);
    expect(github.log.slice(start)).toEqual([]);
  });

  it("answers a repeated keyed write from the effect ledger instead of posting twice", async () => {
    const start = github.log.length;
    const key = { "idempotency-key": "a".repeat(64) };
    const first = await post("comment_on_issue", { issue_number: issue, body: "once" }, key);
    const again = await post("comment_on_issue", { issue_number: issue, body: "once" }, key);
    expect(first).toEqual({ status: 200, body: { comment_id: expect.any(Number), html_url: expect.any(String), status: "created" } });
    expect(again).toEqual(first);
    expect(github.log.slice(start).map((e) => `${e.method} ${e.login}`)).toEqual(["POST forger"]);
  });
});
