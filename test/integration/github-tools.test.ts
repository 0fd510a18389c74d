import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Octokit } from "@octokit/rest";
import { doomedSecrets, startGithubPeers, type GithubPeers } from "../helpers/github-peers.ts";
import { runToolCalls, type ToolCallSpec } from "../helpers/github-tasks.ts";
import type { OrkaUnderTest } from "../helpers/orka-server.ts";
import { startOrkaWithPeer } from "../helpers/orka-with-peer.ts";
import type { GithubPeer } from "../peers/github-server.ts";
import { toolResultsOf, type LlmPeer } from "../peers/llm-server.ts";
import { startTokenIssuer, type TokenIssuer } from "../peers/token-issuer.ts";
import { reviewMarker } from "../../src/github/review-marker.ts";

const SOURCE = "acme/widgets";
const FORK = "fork/widgets";
const TOKEN_REPO = "acme/from-token";
const MARKER_KEY = "marker-key-0123456789";
const TOKENS = {
  read: ["read-token-0123456789", "reader"],
  publicationRead: ["pub-read-token-0123456789", "pub-reader"],
  push: ["push-token-0123456789", "pusher"],
  forge: ["forge-token-0123456789", "forger"],
  env: ["env-token-0123456789", "operator"],
  clone: ["clone-token-0123456789", "cloner"],
} as const;

/** A workspace with all four credential roles on distinct Secrets; `overrides` replaces or removes (undefined) fields. */
const workspace = (overrides: Record<string, string | undefined> = {}) =>
  Object.fromEntries(Object.entries({
    intent: "write",
    gitRepo: `https://github.com/${SOURCE}`,
    readCredentialRef: "gh-read",
    publicationGitRepo: `https://github.com/${FORK}`,
    publicationReadCredentialRef: "gh-pub-read",
    publicationCredentialRef: "gh-push",
    forgeCredentialRef: "gh-forge",
    ...overrides,
  }).filter(([, v]) => v !== undefined));

// The GitHub tools end to end: a scripted model calls them in a real server, whose server half resolves
// scope and credentials and calls the GitHub peer; the peer's log shows which token each request carried.
describe("GitHub tools through a real server", () => {
  let peers: GithubPeers;
  let github: GithubPeer;
  let orka: OrkaUnderTest;
  let llm: LlmPeer;
  let issuer: TokenIssuer;
  let stop: () => Promise<void>;
  let issue: number;
  const run = (calls: ToolCallSpec[], spec: Record<string, unknown> = { workspace: workspace() }) => runToolCalls(orka, llm, calls, spec);
  const requestsSince = (start: number) => github.log.slice(start).map((e) => `${e.method} ${e.path.split("?")[0]} ${e.login}`);

  beforeAll(async () => {
    peers = await startGithubPeers();
    ({ github } = peers);
    for (const [token, login] of Object.values(TOKENS)) github.addToken(token, login, login === "forger" || login === "pusher" ? "write" : "read");
    for (const repo of [SOURCE, FORK, TOKEN_REPO]) await github.addRepo(repo, { files: { "README.md": "hello\n" } });
    await github.commit(SOURCE, "feature", { "src/app.ts": "export const answer = 42;\n", "README.md": "hello\nworld\n" });
    await github.openPullRequest(SOURCE, { head: "feature", title: "Add the answer", body: "é".repeat(600), user: "dev" });
    issue = github.addIssue(SOURCE, { title: "Crash on start", body: "it crashes", user: "dev" });
    issuer = await startTokenIssuer();
    ({ orka, peer: llm, stop } = await startOrkaWithPeer(`
apiVersion: v1
kind: Secret
metadata: {name: gh-read}
stringData: {token: ${TOKENS.read[0]}}
---
apiVersion: v1
kind: Secret
metadata: {name: gh-pub-read}
stringData: {token: ${TOKENS.publicationRead[0]}}
---
apiVersion: v1
kind: Secret
metadata: {name: gh-push}
stringData: {token: ${TOKENS.push[0]}}
---
apiVersion: v1
kind: Secret
metadata: {name: gh-forge}
stringData: {token: ${TOKENS.forge[0]}}
---
apiVersion: v1
kind: Secret
metadata: {name: gh-read-keyed}
stringData: {token: not-a-github-token, password: ${TOKENS.read[0]}}
---
apiVersion: v1
kind: Secret
metadata: {name: gh-forge-keyed}
stringData: {token: not-a-github-token, GITHUB_TOKEN: ${TOKENS.forge[0]}}
---
# A workspace naming no read Secret clones with this one; its GitHub tools use the operator's GITHUB_TOKEN.
apiVersion: v1
kind: Secret
metadata: {name: git-credentials}
stringData: {token: ${TOKENS.clone[0]}}
---
apiVersion: core.orka.ai/v1alpha1
kind: Agent
metadata: {name: coordinator}
spec: {providerRef: {name: peer}, model: {name: m-coordinator}, coordination: {enabled: true, allowedAgents: [{name: helper}]}}
---
apiVersion: core.orka.ai/v1alpha1
kind: Agent
metadata: {name: helper}
spec: {providerRef: {name: peer}, model: {name: m-helper}}
`, {
      ...peers.orkaEnv,
      GITHUB_TOKEN: TOKENS.env[0],
      ORKA_PR_REVIEW_MARKER_SECRET: MARKER_KEY,
      ORKA_GITHUB_RETRY_BASE_MS: "1",
      ORKA_TXN_TOKEN_ISSUER: issuer.url,
      ORKA_TXN_TOKEN_AUDIENCE: issuer.audience,
      ORKA_TXN_TOKEN_MODE: "audit",
    }));
  });
  afterAll(async () => {
    await stop();
    await issuer.close();
    await peers.stop();
  });

  it("uses the right credential for each tool: read, publication read, forge, and the operator's GITHUB_TOKEN", async () => {
    let start = github.log.length;
    const { results } = await run([
      { name: "list_pull_requests", arguments: {} },
      { name: "list_pull_requests", arguments: { repo_url: `https://github.com/${FORK}` } },
      { name: "get_issue", arguments: { issue_number: issue } },
      { name: "comment_on_issue", arguments: { issue_number: issue, body: "On it." } },
    ], { workspace: workspace(), tools: ["list_pull_requests", "get_issue", "comment_on_issue"] });
    expect(results[0].pull_requests.map((p: any) => p.title)).toEqual(["Add the answer"]);
    expect(results[1]).toEqual({ pull_requests: [], total_count: 0 });
    expect(results[3]).toEqual({ comment_id: expect.any(Number), html_url: expect.stringContaining(`/${SOURCE}/issues/${issue}#issuecomment-`), status: "created" });
    expect(requestsSince(start).sort()).toEqual([
      `GET /repos/${SOURCE}/issues/${issue} reader`,
      `GET /repos/${SOURCE}/issues/${issue}/comments reader`,
      `GET /repos/${SOURCE}/pulls reader`,
      `GET /repos/${FORK}/pulls pub-reader`,
      `POST /repos/${SOURCE}/issues/${issue}/comments forger`,
    ]);
    expect(github.log.some((e) => e.login === "pusher")).toBe(false);

    start = github.log.length;
    const gitStart = peers.git.requests.length;
    const fallback = await run([{ name: "list_issues", arguments: {} }], { workspace: { gitRepo: `https://github.com/${SOURCE}` } });
    expect(fallback.results[0]).toMatchObject({ count: 1, has_next_page: false });
    expect(requestsSince(start)).toEqual([`GET /repos/${SOURCE}/issues operator`]);
    // The checkout found the conventional Secret; the tool did not take it.
    expect(new Set(peers.git.requests.slice(gitStart).map((r) => r.identity))).toEqual(new Set(["cloner"]));
  });

  it("reads the token under a workspace's configured key, not the Secret's token key", async () => {
    const start = github.log.length;
    const keyed = workspace({ readCredentialRef: "gh-read-keyed", readCredentialKey: "password", forgeCredentialRef: "gh-forge-keyed", forgeCredentialKey: "GITHUB_TOKEN" });
    const { results } = await run([
      { name: "get_issue", arguments: { issue_number: issue } },
      { name: "comment_on_issue", arguments: { issue_number: issue, body: "Keyed." } },
    ], { workspace: keyed, tools: ["get_issue", "comment_on_issue"] });
    expect(results[1]).toMatchObject({ status: "created" });
    expect(requestsSince(start).sort()).toEqual([
      `GET /repos/${SOURCE}/issues/${issue} reader`,
      `GET /repos/${SOURCE}/issues/${issue}/comments reader`,
      `POST /repos/${SOURCE}/issues/${issue}/comments forger`,
    ]);
  });

  it("refuses paging out of range, saying what to send, before any request", async () => {
    const start = github.log.length;
    const { results } = await run([
      { name: "list_pull_requests", arguments: { per_page: 101 } },
      { name: "list_issues", arguments: { per_page: 0 } },
      { name: "list_issues", arguments: { page: 0 } },
    ], { workspace: workspace(), tools: ["list_pull_requests", "list_issues"] });
    expect(results[0]).toMatch(/^Error executing tool: .*per_page must be between 1 and 100; leave it out for 30/);
    expect(results[1]).toMatch(/^Error executing tool: .*per_page must be between 1 and 100; leave it out for 30/);
    expect(results[2]).toMatch(/^Error executing tool: .*page must be 1 or more; leave it out for the first page/);
    expect(github.log.slice(start)).toEqual([]);
  });

  it("refuses a repository outside the scope in every repo_url tool, before any Secret read or request", async () => {
    const other = "https://github.com/acme/other";
    // The checkout reads the workspace's Secrets; the model deletes them before its calls, so a tool that read one would fail on that instead.
    const secrets = doomedSecrets((method, path, body) => orka.api(method, `/api/v1${path}`, body), {
      "doomed-read": TOKENS.read[0], "doomed-pub": TOKENS.publicationRead[0], "doomed-forge": TOKENS.forge[0],
    });
    await secrets.create();
    const doomed = workspace({ readCredentialRef: "doomed-read", publicationReadCredentialRef: "doomed-pub", forgeCredentialRef: "doomed-forge" });
    const start = github.log.length;
    let gitStart = 0;
    const calls: ToolCallSpec[] = [
      { name: "list_pull_requests", arguments: { repo_url: other } },
      { name: "check_pr_review_marker", arguments: { repo_url: other, pr_number: 1 } },
      { name: "review_pull_request", arguments: { repo_url: other, pr_number: 1 } },
      { name: "list_issues", arguments: { repo_url: other } },
      { name: "get_issue", arguments: { repo_url: other, issue_number: 1 } },
      { name: "comment_on_issue", arguments: { repo_url: other, issue_number: 1, body: "x" } },
    ];
    const { results } = await runToolCalls(orka, llm, calls, { workspace: doomed }, {
      beforeCalls: async () => {
        await secrets.delete();
        gitStart = peers.git.requests.length;
      },
    });
    expect(results).toEqual(calls.map(() =>
      `Error executing tool: repo_url repository acme/other does not match permitted repository scope task workspace=${SOURCE}, task publication workspace=${FORK}`));
    expect(github.log.slice(start)).toEqual([]);
    expect(peers.git.requests.slice(gitStart)).toEqual([]);
  });

  it("matches repositories case-insensitively and grants scope through a signed transaction's repo context", async () => {
    let start = github.log.length;
    const { results } = await run([{ name: "list_pull_requests", arguments: { repo_url: "git@github.com:ACME/Widgets.git" } }]);
    expect(results[0]).toMatchObject({ total_count: 1 });
    expect(requestsSince(start)).toEqual([`GET /repos/${SOURCE}/pulls reader`]);

    start = github.log.length;
    const token = await issuer.mint("orka:tasks:create orka:tasks:get", { tctx: { namespace: "default", repo: `https://github.com/${TOKEN_REPO}` } });
    const withToken = (body: Record<string, unknown>) =>
      fetch(`${orka.url}/api/v1/tasks`, { method: "POST", headers: { "txn-token": token, "content-type": "application/json" }, body: JSON.stringify(body) })
        .then(async (r) => ({ status: r.status, body: await r.json() }));
    const txn = await runToolCalls(orka, llm, [
      { name: "list_pull_requests", arguments: { repo_url: "https://github.com/Acme/From-Token" } },
      { name: "list_pull_requests", arguments: { repo_url: `https://github.com/${SOURCE}` } },
    ], {}, { create: withToken });
    expect(txn.task.spec.transaction.context.repo).toBe(`https://github.com/${TOKEN_REPO}`);
    expect(txn.results).toEqual([
      { pull_requests: [], total_count: 0 },
      `Error executing tool: repo_url repository ${SOURCE} does not match permitted repository scope transaction repo context=${TOKEN_REPO}`,
    ]);
    expect(requestsSince(start)).toEqual([`GET /repos/${TOKEN_REPO}/pulls operator`]);
  });

  it("writes only with the forge credential", async () => {
    const start = github.log.length;
    const { task, results } = await run([{ name: "comment_on_issue", arguments: { issue_number: issue, body: "hi" } }], { workspace: { gitRepo: `https://github.com/${SOURCE}`, readCredentialRef: "gh-read" } });
    expect(results).toEqual([`Error executing tool: task ${task.metadata.name} workspace has no forgeCredentialRef configured`]);
    expect(github.log.slice(start)).toEqual([]);
  });

  it("reviews a pull request: metadata, head, the diff GitHub serves and every file", async () => {
    const direct = new Octokit({ baseUrl: github.baseUrl, auth: TOKENS.read[0] });
    const [owner, repo] = SOURCE.split("/");
    const { data: diff } = await direct.rest.pulls.get({ owner, repo, pull_number: 1, mediaType: { format: "diff" } });
    const head = await github.head(SOURCE, "feature");
    const { results } = await run([{ name: "review_pull_request", arguments: { pr_number: 1 } }]);
    expect(results[0]).toMatchObject({
      pr_title: "Add the answer", pr_body: "é".repeat(600), pr_author: "dev", base_branch: "main", head_branch: "feature", head_sha: head,
      diff: String(diff), diff_truncated: false, files_truncated: false, status: "fetched",
    });
    expect(results[0].files.map((f: any) => [f.filename, f.status, f.additions, f.deletions])).toEqual([["README.md", "modified", 1, 0], ["src/app.ts", "added", 1, 0]]);
    expect(results[0].files[1].patch).toContain("+export const answer = 42;");
  });

  it("finds a review marker signed with the operator's key, and hands out the marker for a new review", async () => {
    const head = (await github.head(SOURCE, "feature"))!;
    const marker = reviewMarker(MARKER_KEY, { owner: "acme", repo: "widgets", pr: 1, headSha: head });
    const before = await run([{ name: "check_pr_review_marker", arguments: { pr_number: 1 } }]);
    expect(before.results[0]).toEqual({ found: false, pr_number: 1, head_sha: head, marker, message: "no review marker found for this PR head SHA" });
    await github.addReview(SOURCE, 1, { user: "someone", state: "COMMENTED", body: `LGTM\n${marker}` });
    const after = await run([{ name: "check_pr_review_marker", arguments: { pr_number: 1, head_sha: head.toUpperCase() } }]);
    expect(after.results[0]).toMatchObject({ found: true, author: "someone", source: "review", marker });
  });

  it("lists open unassigned issues by default, without pull requests, bodies cut at 500 code points", async () => {
    const repo = "acme/issues";
    await github.addRepo(repo, { files: { "README.md": "x\n" } });
    await github.commit(repo, "fix", { "fix.txt": "fix\n" });
    await github.openPullRequest(repo, { head: "fix", user: "dev" });
    const long = github.addIssue(repo, { title: "Long", body: "😀".repeat(501), user: "dev", labels: ["bug"] });
    github.addIssue(repo, { title: "Taken", user: "dev", assignees: ["dev"] });
    const exact = github.addIssue(repo, { title: "Exact", body: "ü".repeat(500), user: "dev" });
    const ws = { workspace: workspace({ gitRepo: `https://github.com/${repo}` }) };
    const start = github.log.length;
    const { results } = await run([
      { name: "list_issues", arguments: {} },
      { name: "list_issues", arguments: { unassigned_only: false, per_page: 2 } },
      { name: "list_issues", arguments: { unassigned_only: false, per_page: 2, page: 2 } },
    ], ws);
    expect(results[0]).toEqual({
      issues: [
        { number: exact, title: "Exact", body: "ü".repeat(500), author: "dev", labels: [], created_at: expect.any(String), html_url: expect.stringContaining(`/${repo}/issues/${exact}`) },
        { number: long, title: "Long", body: `${"😀".repeat(500)}...`, author: "dev", labels: ["bug"], created_at: expect.any(String), html_url: expect.stringContaining(`/${repo}/issues/${long}`) },
      ],
      count: 2,
      has_next_page: false,
    });
    // Page one holds the two newest: an issue and the pull request, which is dropped.
    expect(results[1]).toMatchObject({ issues: [{ title: "Exact" }, { title: "Taken" }], count: 2, has_next_page: true });
    expect(results[2]).toMatchObject({ issues: [{ title: "Long" }], count: 1, has_next_page: false });
    expect(github.log.slice(start).map((e) => e.path).sort()).toEqual([
      `/repos/${repo}/issues?state=open&assignee=none&per_page=30&page=1`,
      `/repos/${repo}/issues?state=open&per_page=2&page=1`,
      `/repos/${repo}/issues?state=open&per_page=2&page=2`,
    ]);
  });

  it("gets an issue with its comments, and without them when they cannot be read", async () => {
    github.addComment(SOURCE, issue, "dev", "Any news?");
    const { results } = await run([{ name: "get_issue", arguments: { issue_number: issue } }]);
    expect(results[0]).toMatchObject({
      number: issue, title: "Crash on start", body: "it crashes", author: "dev", labels: [], assignees: [], state: "open", comment_count: expect.any(Number),
      comments: expect.arrayContaining([{ author: "dev", body: "Any news?", created_at: expect.any(String) }]),
    });
    github.injectFault({ kind: "bad-gateway" }, 4, { pathPattern: /\/comments$/ });
    const degraded = await run([{ name: "get_issue", arguments: { issue_number: issue } }]);
    expect(degraded.results[0]).toMatchObject({ number: issue, comments: [] });
    const refused = await run([
      { name: "get_issue", arguments: { issue_number: 0 } },
      { name: "comment_on_issue", arguments: { issue_number: issue, body: "  " } },
    ]);
    expect(refused.results).toEqual(["Error executing tool: issue_number is required and must be positive", "Error executing tool: body is required"]);
  });

  it("posts a comment once, even when GitHub fails it", async () => {
    github.injectFault({ kind: "bad-gateway" }, 1, { method: "POST" });
    const start = github.log.length;
    const { results } = await run([{ name: "comment_on_issue", arguments: { issue_number: issue, body: "Retry me?" } }]);
    expect(results[0]).toMatch(/^Error executing tool: failed to comment on issue: GitHub API returned 502: /);
    expect(requestsSince(start)).toEqual([`POST /repos/${SOURCE}/issues/${issue}/comments undefined`]);
  });

  it("never lets a credential reach the model or the Task's record, even when GitHub's answer quotes it", async () => {
    const repo = "acme/leaky";
    await github.addRepo(repo, { files: { "README.md": "x\n" } });
    github.addIssue(repo, { title: "Leak", body: `someone pasted ${TOKENS.read[0]} here`, user: "dev" });
    const { task, results } = await run([{ name: "list_issues", arguments: {} }], { workspace: workspace({ gitRepo: `https://github.com/${repo}` }) });
    expect(results[0].issues[0].body).toBe("someone pasted [REDACTED] here");
    const record = JSON.stringify([
      (await orka.api("GET", `/api/v1/tasks/${task.metadata.name}/events`)).body,
      (await orka.api("GET", `/api/v1/tasks/${task.metadata.name}`)).body,
      llm.requests.map((r) => r.body),
    ]);
    for (const [token] of Object.values(TOKENS)) expect(record).not.toContain(token);
  });

  it("offers a coordinator the pull request tools and the issue tools only when selected, with no notice for built tools", async () => {
    llm.script("m-coordinator", [{ text: "ok" }]);
    await orka.api("POST", "/api/v1/tasks", { name: "coordinating", type: "ai", agentRef: "coordinator", prompt: "look around" });
    await orka.waitFor("coordinating", ["Succeeded", "Failed"], 30_000);
    const offered = (llm.requests.find((r) => r.body.model === "m-coordinator")!.body.tools as any[]).map((t) => t.function.name);
    expect(offered).toEqual(expect.arrayContaining(["list_pull_requests", "check_pr_review_marker", "review_pull_request"]));
    expect(offered).not.toContain("list_issues");
    const { task } = await run([{ name: "list_issues", arguments: {} }], { workspace: workspace(), tools: ["list_issues", "get_issue", "comment_on_issue"] });
    const notices = [task.metadata.name, "coordinating"].map(async (name) => (await orka.api("GET", `/api/v1/tasks/${name}/events?type=Warning`)).body.events.map((e: any) => e.summary));
    for (const summaries of await Promise.all(notices)) {
      for (const built of ["list_pull_requests", "check_pr_review_marker", "review_pull_request", "list_issues", "get_issue", "comment_on_issue"]) {
        expect(summaries.join("\n")).not.toMatch(new RegExp(`\\b${built}\\b`));
      }
    }
  });

  it("acts on a child's repository with the child's credential, and on no other Task's", async () => {
    llm.script("m-coordinator", [
      { toolCalls: [{ name: "create_container_task", arguments: { command: ["true"], workspace: { gitRepo: `https://github.com/${FORK}`, readCredentialRef: "gh-pub-read" } } }] },
      (body) => {
        const created = JSON.parse(toolResultsOf(body)[0]);
        if (!created.success) return { text: JSON.stringify(created) };
        const child = created.data.name;
        return {
          toolCalls: [
            { name: "list_pull_requests", arguments: { task_name: child } },
            { name: "list_pull_requests", arguments: { task_name: child, repo_url: `https://github.com/${SOURCE}` } },
            { name: "list_pull_requests", arguments: { task_name: "unrelated" } },
          ],
        };
      },
      { text: "done" },
    ]);
    await orka.api("POST", "/api/v1/tasks", { name: "unrelated", type: "container", command: ["true"], workspace: { gitRepo: `https://github.com/${SOURCE}`, readCredentialRef: "gh-read" } });
    const start = github.log.length;
    await orka.api("POST", "/api/v1/tasks", { name: "parent-of-one", type: "ai", agentRef: "coordinator", prompt: "delegate and look" });
    expect((await orka.waitFor("parent-of-one", ["Succeeded", "Failed"], 20_000)).status.phase).toBe("Succeeded");
    const last = llm.requests.filter((r) => r.body.model === "m-coordinator").at(-1)!.body;
    const [first, second, third] = toolResultsOf(last).slice(-3);
    expect(JSON.parse(first)).toEqual({ pull_requests: [], total_count: 0 });
    expect(second).toBe(`Error executing tool: repo_url repository ${SOURCE} does not match permitted repository scope task workspace=${FORK}`);
    expect(third).toBe("Error executing tool: task unrelated is not the current task or one of its children");
    expect(requestsSince(start)).toEqual([`GET /repos/${FORK}/pulls pub-reader`]);
  });
});
