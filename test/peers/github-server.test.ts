import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { retry } from "@octokit/plugin-retry";
import { throttling } from "@octokit/plugin-throttling";
import { Octokit } from "@octokit/rest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadGithubOpenApi, type Method, type OpenApiValidator } from "../helpers/github-openapi.ts";
import { startGithubPeer, type GithubPeer } from "./github-server.ts";

const run = promisify(execFile);
const REPO = "acme/widgets";
const owner = "acme";
const repo = "widgets";
const P = "/repos/{owner}/{repo}";
const OPERATIONS: [Method, string][] = [
  ["get", "/user"],
  ["get", P],
  ["get", `${P}/git/ref/{ref}`],
  ["post", `${P}/pulls`],
  ["get", `${P}/pulls`],
  ["get", `${P}/pulls/{pull_number}`],
  ["get", `${P}/pulls/{pull_number}/files`],
  ["get", `${P}/pulls/{pull_number}/reviews`],
  ["post", `${P}/pulls/{pull_number}/reviews`],
  ["put", `${P}/pulls/{pull_number}/merge`],
  ["get", `${P}/commits/{ref}/check-runs`],
  ["post", `${P}/check-runs`],
  ["patch", `${P}/check-runs/{check_run_id}`],
  ["post", `${P}/statuses/{sha}`],
  ["get", `${P}/commits/{ref}/status`],
  ["get", `${P}/compare/{basehead}`],
  ["get", `${P}/collaborators/{username}/permission`],
  ["get", `${P}/issues`],
  ["get", `${P}/issues/{issue_number}`],
  ["get", `${P}/issues/{issue_number}/comments`],
  ["post", `${P}/issues/{issue_number}/comments`],
];
const LINES = Array.from({ length: 40 }, (_, i) => `line ${i + 1}`);

interface Answer {
  status: number;
  data: unknown;
  headers?: Record<string, unknown>;
}

/** The HTTP answer of an Octokit call, whether it succeeded or was refused. */
async function answerOf(call: Promise<Answer>): Promise<Answer> {
  try {
    return await call;
  } catch (error) {
    const failure = error as { status?: number; response?: Answer };
    if (!failure.response) throw error;
    return { status: failure.status ?? failure.response.status, data: failure.response.data, headers: failure.response.headers };
  }
}

// The peer must answer as GitHub does: every body is checked against GitHub's own OpenAPI description,
// and the official Octokit client drives it.
describe("GitHub peer through Octokit, against GitHub's OpenAPI description", () => {
  let peer: GithubPeer;
  let openapi: OpenApiValidator;
  let writer: Octokit;
  let reader: Octokit;
  let author: Octokit;
  let gitDir: string;

  function conforms(method: Method, path: string, answer: Answer, status: number): void {
    expect(answer.status).toBe(status);
    expect(openapi.errors(method, path, answer.status, answer.data)).toEqual([]);
  }

  async function branchWithChange(branch: string, line: number): Promise<string> {
    const changed = LINES.map((l, i) => (i + 1 === line ? `${l} changed on ${branch}` : l));
    return peer.commit(REPO, branch, { "a.txt": `${changed.join("\n")}\n`, [`${branch}.txt`]: "new\n" });
  }

  beforeAll(async () => {
    openapi = loadGithubOpenApi(OPERATIONS);
    peer = await startGithubPeer();
    peer.addToken("w-token", "orka-bot", "write");
    peer.addToken("r-token", "reader", "read");
    peer.addToken("a-token", "alice", "write", [REPO]);
    gitDir = (await peer.addRepo(REPO, { files: { "a.txt": `${LINES.join("\n")}\n` } })).git.dir;
    writer = new Octokit({ baseUrl: peer.baseUrl, auth: "w-token" });
    reader = new Octokit({ baseUrl: peer.baseUrl, auth: "r-token" });
    author = new Octokit({ baseUrl: peer.baseUrl, auth: "a-token" });
  }, 20_000);
  afterAll(() => peer?.stop());

  it("answers GET /user for `token` and `Bearer` credentials, and 401 for an unknown one", async () => {
    conforms("get", "/user", await writer.rest.users.getAuthenticated(), 200);
    const bearer = await new Octokit({ baseUrl: peer.baseUrl }).request("GET /user", { headers: { authorization: "Bearer r-token" } });
    expect(bearer.data.login).toBe("reader");
    expect(peer.log.at(-1)?.apiVersion).toBeUndefined();
    const versioned = await writer.request("GET /user", { headers: { "x-github-api-version": "2022-11-28" } });
    expect([versioned.status, peer.log.at(-1)?.apiVersion]).toEqual([200, "2022-11-28"]);
    const unsupported = await answerOf(writer.request("GET /user", { headers: { "x-github-api-version": "2019-01-01" } }));
    expect([unsupported.status, unsupported.data]).toEqual([400, expect.objectContaining({ message: expect.stringContaining("2019-01-01") })]);
    const unknown = await answerOf(new Octokit({ baseUrl: peer.baseUrl, auth: "nope" }).rest.users.getAuthenticated());
    conforms("get", "/user", unknown, 401);
    expect(unknown.data).toMatchObject({ message: "Bad credentials" });
    expect(peer.log.slice(-5).map((e) => [e.token, e.login, e.status])).toEqual([
      ["w-token", "orka-bot", 200],
      ["r-token", "reader", 200],
      ["w-token", "orka-bot", 200],
      ["w-token", "orka-bot", 400],
      ["nope", undefined, 401],
    ]);
  });

  it("serves the repository, its branch refs and rate-limit headers", async () => {
    const found = await reader.rest.repos.get({ owner, repo });
    conforms("get", P, found, 200);
    expect(found.data.default_branch).toBe("main");
    expect(Number(found.headers["x-ratelimit-limit"])).toBe(5000);
    expect(Number(found.headers["x-ratelimit-remaining"])).toBeLessThan(5000);
    const ref = await reader.rest.git.getRef({ owner, repo, ref: "heads/main" });
    conforms("get", `${P}/git/ref/{ref}`, ref, 200);
    expect(ref.data.object.sha).toBe(await peer.head(REPO, "main"));
    conforms("get", `${P}/git/ref/{ref}`, await answerOf(reader.rest.git.getRef({ owner, repo, ref: "heads/absent" })), 404);
    conforms("get", P, await answerOf(reader.rest.repos.get({ owner, repo: "absent" })), 404);
  });

  it("opens a pull request once, and refuses a duplicate, a missing head, head = base and a read-only token", async () => {
    await branchWithChange("feature", 5);
    const opened = await author.rest.pulls.create({ owner, repo, head: "feature", base: "main", title: "Feature", body: "Adds it" });
    conforms("post", `${P}/pulls`, opened, 201);
    expect(opened.data.head.sha).toBe(await peer.head(REPO, "feature"));
    const duplicate = await answerOf(author.rest.pulls.create({ owner, repo, head: "acme:feature", base: "main", title: "Again" }));
    conforms("post", `${P}/pulls`, duplicate, 422);
    expect(JSON.stringify(duplicate.data)).toContain("A pull request already exists for acme:feature.");
    conforms("post", `${P}/pulls`, await answerOf(author.rest.pulls.create({ owner, repo, head: "absent", base: "main", title: "x" })), 422);
    conforms("post", `${P}/pulls`, await answerOf(author.rest.pulls.create({ owner, repo, head: "main", base: "main", title: "x" })), 422);
    const readOnly = await answerOf(reader.rest.pulls.create({ owner, repo, head: "feature", base: "main", title: "x" }));
    conforms("post", `${P}/pulls`, readOnly, 403);
    expect(peer.log.at(-1)).toMatchObject({ method: "POST", token: "r-token", status: 403 });
  });

  it("serves a pull request as JSON and as the diff git itself gives", async () => {
    const pull = await reader.rest.pulls.get({ owner, repo, pull_number: 1 });
    conforms("get", `${P}/pulls/{pull_number}`, pull, 200);
    expect(pull.data).toMatchObject({ state: "open", merged: false, mergeable: true, draft: false, user: { login: "alice" }, head: { ref: "feature" }, base: { ref: "main" } });
    const diff = await reader.rest.pulls.get({ owner, repo, pull_number: 1, mediaType: { format: "diff" } });
    const { stdout } = await run("git", ["--git-dir", gitDir, "diff", "main...feature"]);
    expect(diff.data as unknown as string).toBe(stdout);
    conforms("get", `${P}/pulls/{pull_number}`, await answerOf(reader.rest.pulls.get({ owner, repo, pull_number: 99 })), 404);
    const files = await reader.rest.pulls.listFiles({ owner, repo, pull_number: 1 });
    conforms("get", `${P}/pulls/{pull_number}/files`, files, 200);
    expect(files.data.map((f) => [f.filename, f.status, f.additions, f.deletions])).toEqual([
      ["a.txt", "modified", 1, 1],
      ["feature.txt", "added", 1, 0],
    ]);
  });

  it("lists pull requests by state, head and base, a page at a time with `Link` headers", async () => {
    for (const n of [1, 2, 3]) {
      await branchWithChange(`topic-${n}`, 10 + 5 * n);
      await peer.openPullRequest(REPO, { head: `topic-${n}`, user: "alice" });
    }
    await peer.closePullRequest(REPO, 4);
    const first = await reader.rest.pulls.list({ owner, repo, per_page: 2 });
    conforms("get", `${P}/pulls`, first, 200);
    expect(first.headers.link).toContain('rel="next"');
    const all = await reader.paginate(reader.rest.pulls.list, { owner, repo, per_page: 1 });
    expect(all.map((p) => p.number).sort()).toEqual([1, 2, 3]);
    const closed = await reader.rest.pulls.list({ owner, repo, state: "closed" });
    expect(closed.data.map((p) => p.number)).toEqual([4]);
    const byHead = await reader.rest.pulls.list({ owner, repo, head: "acme:topic-2", base: "main", state: "all" });
    expect(byHead.data.map((p) => p.number)).toEqual([3]);
  });

  it("records reviews with line comments inside the diff, and refuses a bad event or a line outside it", async () => {
    await peer.addReview(REPO, 1, { user: "reader", state: "COMMENTED", body: "seeded" });
    const posted = await writer.rest.pulls.createReview({
      owner, repo, pull_number: 1, event: "REQUEST_CHANGES", body: "please fix", comments: [{ path: "a.txt", line: 5, body: "here" }],
    });
    conforms("post", `${P}/pulls/{pull_number}/reviews`, posted, 200);
    expect(posted.data).toMatchObject({ state: "CHANGES_REQUESTED", commit_id: await peer.head(REPO, "feature") });
    const reviews = await reader.rest.pulls.listReviews({ owner, repo, pull_number: 1 });
    conforms("get", `${P}/pulls/{pull_number}/reviews`, reviews, 200);
    expect(reviews.data.map((r) => r.state)).toEqual(["COMMENTED", "CHANGES_REQUESTED"]);
    const badEvent = await answerOf(writer.request("POST /repos/{owner}/{repo}/pulls/{pull_number}/reviews", { owner, repo, pull_number: 1, event: "LGTM" as never }));
    conforms("post", `${P}/pulls/{pull_number}/reviews`, badEvent, 422);
    const outside = await answerOf(writer.rest.pulls.createReview({ owner, repo, pull_number: 1, event: "COMMENT", comments: [{ path: "a.txt", line: 30, body: "far" }] }));
    conforms("post", `${P}/pulls/{pull_number}/reviews`, outside, 422);
    expect(peer.pullRequest(REPO, 1).pull.reviews).toHaveLength(2);
  });

  it("serves check runs and the combined commit status of a ref, every page", async () => {
    const head = (await peer.head(REPO, "feature"))!;
    await peer.addCheckRun(REPO, head, { name: "build", conclusion: "success" });
    await peer.addCheckRun(REPO, "feature", { name: "test", status: "in_progress" });
    await peer.addStatus(REPO, head, { context: "ci/lint", state: "pending" });
    await peer.addStatus(REPO, head, { context: "ci/lint", state: "success" });
    await peer.addStatus(REPO, head, { context: "ci/deploy", state: "failure", description: "red" });
    const runs = await reader.rest.checks.listForRef({ owner, repo, ref: head, per_page: 1 });
    conforms("get", `${P}/commits/{ref}/check-runs`, runs, 200);
    expect(runs.data.total_count).toBe(2);
    const every = await reader.paginate(reader.rest.checks.listForRef, { owner, repo, ref: "feature", per_page: 1 });
    expect(every.map((r) => [r.name, r.status, r.conclusion])).toEqual([["build", "completed", "success"], ["test", "in_progress", null]]);
    const status = await reader.rest.repos.getCombinedStatusForRef({ owner, repo, ref: head });
    conforms("get", `${P}/commits/{ref}/status`, status, 200);
    expect(status.data).toMatchObject({ state: "failure", total_count: 2 });
    const none = await reader.rest.checks.listForRef({ owner, repo, ref: "main" });
    expect(none.data).toMatchObject({ total_count: 0, check_runs: [] });
  });

  it("lets a CI system register and complete check runs and post commit statuses", async () => {
    const head = (await peer.head(REPO, "feature"))!;
    const queued = await writer.rest.checks.create({ owner, repo, name: "e2e", head_sha: head, status: "in_progress" });
    conforms("post", `${P}/check-runs`, queued, 201);
    expect(queued.data).toMatchObject({ name: "e2e", head_sha: head, status: "in_progress", conclusion: null });
    const done = await writer.rest.checks.update({ owner, repo, check_run_id: queued.data.id, conclusion: "neutral" });
    conforms("patch", `${P}/check-runs/{check_run_id}`, done, 200);
    expect(done.data).toMatchObject({ status: "completed", conclusion: "neutral" });
    const listed = await reader.paginate(reader.rest.checks.listForRef, { owner, repo, ref: head });
    expect(listed.find((r) => r.id === queued.data.id)).toMatchObject({ status: "completed", conclusion: "neutral" });
    const status = await writer.rest.repos.createCommitStatus({ owner, repo, sha: head, state: "success", context: "ci/e2e" });
    conforms("post", `${P}/statuses/{sha}`, status, 201);
    const combined = await reader.rest.repos.getCombinedStatusForRef({ owner, repo, ref: head });
    expect(combined.data.statuses.map((s) => [s.context, s.state])).toContainEqual(["ci/e2e", "success"]);
    const refused = await Promise.all([
      answerOf(writer.request("POST /repos/{owner}/{repo}/check-runs", { owner, repo, head_sha: head } as never)),
      answerOf(writer.rest.checks.update({ owner, repo, check_run_id: queued.data.id, conclusion: "green" as never })),
      answerOf(writer.rest.repos.createCommitStatus({ owner, repo, sha: head, state: "fine" as never })),
      answerOf(reader.rest.repos.createCommitStatus({ owner, repo, sha: head, state: "success" })),
      answerOf(writer.rest.checks.update({ owner, repo, check_run_id: 1, status: "completed" })),
    ]);
    expect(refused.map((a) => a.status)).toEqual([422, 422, 422, 403, 404]);
  });

  it("merges for real, refusing a moved head (409) and an unmergeable or merged pull request (405)", async () => {
    const moved = await answerOf(writer.rest.pulls.merge({ owner, repo, pull_number: 1, sha: "0".repeat(40) }));
    conforms("put", `${P}/pulls/{pull_number}/merge`, moved, 409);
    peer.setMergeable(REPO, 1, false);
    conforms("put", `${P}/pulls/{pull_number}/merge`, await answerOf(writer.rest.pulls.merge({ owner, repo, pull_number: 1 })), 405);
    peer.setMergeable(REPO, 1, true);
    const merged = await writer.rest.pulls.merge({ owner, repo, pull_number: 1, sha: (await peer.head(REPO, "feature"))!, merge_method: "merge" });
    conforms("put", `${P}/pulls/{pull_number}/merge`, merged, 200);
    expect(merged.data).toMatchObject({ merged: true, sha: await peer.head(REPO, "main") });
    const { stdout } = await run("git", ["--git-dir", gitDir, "show", "main:a.txt"]);
    expect(stdout).toContain("line 5 changed on feature");
    conforms("put", `${P}/pulls/{pull_number}/merge`, await answerOf(writer.rest.pulls.merge({ owner, repo, pull_number: 1 })), 405);
    const after = await reader.rest.pulls.get({ owner, repo, pull_number: 1 });
    expect(after.data).toMatchObject({ state: "closed", merged: true, merge_commit_sha: merged.data.sha, merged_by: { login: "orka-bot" } });
    const mergedFiles = await reader.rest.pulls.listFiles({ owner, repo, pull_number: 1 });
    expect(mergedFiles.data.map((f) => f.filename)).toEqual(["a.txt", "feature.txt"]);
    const squashed = await writer.rest.pulls.merge({ owner, repo, pull_number: 2, merge_method: "squash" });
    const { stdout: parents } = await run("git", ["--git-dir", gitDir, "rev-list", "--parents", "-n", "1", squashed.data.sha]);
    expect(parents.trim().split(" ")).toHaveLength(2);
    conforms("put", `${P}/pulls/{pull_number}/merge`, await answerOf(writer.request("PUT /repos/{owner}/{repo}/pulls/{pull_number}/merge", { owner, repo, pull_number: 3, merge_method: "fast" as never })), 422);
    await branchWithChange("to-rebase", 35);
    const number = await peer.openPullRequest(REPO, { head: "to-rebase", user: "alice" });
    const rebased = await writer.rest.pulls.merge({ owner, repo, pull_number: number, merge_method: "rebase" });
    conforms("put", `${P}/pulls/{pull_number}/merge`, rebased, 200);
    const { stdout: tip } = await run("git", ["--git-dir", gitDir, "log", "--format=%P%n%s", "-n", "1", "main"]);
    expect(tip.trim().split("\n")).toEqual([squashed.data.sha, "Change to-rebase"]);
    expect(rebased.data.sha).toBe(await peer.head(REPO, "main"));
    expect(peer.pullRequest(REPO, number)).toMatchObject({ state: "closed", pull: { merged: true } });
  });

  it("refuses to merge branches that conflict, and leaves the base where it was", async () => {
    await peer.commit(REPO, "left", { "c.txt": "left\n" });
    await peer.commit(REPO, "right", { "c.txt": "right\n" });
    const left = await peer.openPullRequest(REPO, { head: "left", user: "alice" });
    const right = await peer.openPullRequest(REPO, { head: "right", user: "alice" });
    await peer.mergePullRequest(REPO, left, "squash");
    const before = await peer.head(REPO, "main");
    expect((await reader.rest.pulls.get({ owner, repo, pull_number: right })).data).toMatchObject({ mergeable: false, mergeable_state: "dirty" });
    for (const method of ["merge", "squash", "rebase"] as const) {
      const refused = await answerOf(writer.rest.pulls.merge({ owner, repo, pull_number: right, merge_method: method }));
      conforms("put", `${P}/pulls/{pull_number}/merge`, refused, 405);
    }
    expect(await peer.head(REPO, "main")).toBe(before);
    await peer.closePullRequest(REPO, right);
  });

  it("follows a force-push of a pull request's head", async () => {
    const rewritten = await peer.commit(REPO, "rewrite", { "a.txt": "rewritten\n" });
    await peer.forcePush(REPO, "topic-2", rewritten);
    const pull = await reader.rest.pulls.get({ owner, repo, pull_number: 3 });
    expect(pull.data.head.sha).toBe(rewritten);
  });

  it("compares two refs as git does, for monitors", async () => {
    await peer.commit(REPO, "cmp", { "c.txt": "one\n" }, { message: "First" });
    const tip = await peer.commit(REPO, "cmp", { "c.txt": "two\n" }, { message: "Second" });
    const ahead = await reader.rest.repos.compareCommitsWithBasehead({ owner, repo, basehead: "main...cmp" });
    conforms("get", `${P}/compare/{basehead}`, ahead, 200);
    expect(ahead.data).toMatchObject({ status: "ahead", ahead_by: 2, behind_by: 0, total_commits: 2, merge_base_commit: { sha: await peer.head(REPO, "main") } });
    expect(ahead.data.commits.map((c) => [c.commit.message, c.sha])).toEqual([["First", expect.any(String)], ["Second", tip]]);
    expect(ahead.data.files?.map((f) => f.filename)).toEqual(["c.txt"]);
    const behind = await reader.rest.repos.compareCommitsWithBasehead({ owner, repo, basehead: `${tip}...main` });
    expect(behind.data).toMatchObject({ status: "behind", ahead_by: 0, behind_by: 2, commits: [] });
  });

  it("tells a user's permission on the repository", async () => {
    const asked = async (username: string) => answerOf(reader.rest.repos.getCollaboratorPermissionLevel({ owner, repo, username }));
    for (const [username, permission] of [["acme", "admin"], ["orka-bot", "write"], ["reader", "read"]]) {
      const answer = await asked(username!);
      conforms("get", `${P}/collaborators/{username}/permission`, answer, 200);
      expect(answer.data).toMatchObject({ permission, user: { login: username } });
    }
    conforms("get", `${P}/collaborators/{username}/permission`, await asked("ghost"), 404);
  });

  it("lists issues with pull requests among them, filters `assignee=none`, and takes comments", async () => {
    const unassigned = peer.addIssue(REPO, { title: "Bug", body: "broken", user: "reader" });
    peer.addIssue(REPO, { title: "Taken", user: "reader", assignees: ["alice"], labels: ["bug"] });
    peer.addComment(REPO, unassigned, "alice", "seen");
    const open = await reader.rest.issues.listForRepo({ owner, repo, assignee: "none", per_page: 100 });
    conforms("get", `${P}/issues`, open, 200);
    expect(open.data.map((i) => [i.number, i.pull_request !== undefined])).toEqual([[unassigned, false], [3, true]]);
    const labelled = await reader.rest.issues.listForRepo({ owner, repo, labels: "bug" });
    expect(labelled.data.map((i) => i.title)).toEqual(["Taken"]);
    const issue = await reader.rest.issues.get({ owner, repo, issue_number: unassigned });
    conforms("get", `${P}/issues/{issue_number}`, issue, 200);
    conforms("get", `${P}/issues/{issue_number}`, await answerOf(reader.rest.issues.get({ owner, repo, issue_number: 999 })), 404);
    const comment = await writer.rest.issues.createComment({ owner, repo, issue_number: unassigned, body: "on it" });
    conforms("post", `${P}/issues/{issue_number}/comments`, comment, 201);
    const comments = await reader.rest.issues.listComments({ owner, repo, issue_number: unassigned });
    conforms("get", `${P}/issues/{issue_number}/comments`, comments, 200);
    expect(comments.data.map((c) => [c.user?.login, c.body])).toEqual([["alice", "seen"], ["orka-bot", "on it"]]);
    const refused = await answerOf(reader.rest.issues.createComment({ owner, repo, issue_number: unassigned, body: "no" }));
    conforms("post", `${P}/issues/{issue_number}/comments`, refused, 403);
    conforms("post", `${P}/issues/{issue_number}/comments`, await answerOf(writer.rest.issues.createComment({ owner, repo, issue_number: unassigned, body: "" })), 422);
  });

  it("hides a repository a token does not reach", async () => {
    await peer.addRepo("other/private", { private: true });
    expect((await answerOf(author.rest.repos.get({ owner: "other", repo: "private" }))).status).toBe(404);
    expect((await writer.rest.repos.get({ owner: "other", repo: "private" })).data.private).toBe(true);
  });

  it("injects 429 with retry-after, 502 and a secondary-limit 403, each for as many requests as asked", async () => {
    peer.injectFault({ kind: "rate-limit", retryAfterSeconds: 7 }, 1, { method: "GET", pathPattern: /\/pulls$/ });
    peer.injectFault({ kind: "bad-gateway" }, 2);
    peer.injectFault({ kind: "secondary-limit", retryAfterSeconds: 3 }, 1);
    const limited = await answerOf(reader.rest.pulls.list({ owner, repo }));
    expect([limited.status, limited.headers?.["retry-after"], limited.headers?.["x-ratelimit-remaining"]]).toEqual([429, "7", "0"]);
    for (let i = 0; i < 2; i++) expect((await answerOf(reader.rest.repos.get({ owner, repo }))).status).toBe(502);
    const secondary = await answerOf(reader.rest.repos.get({ owner, repo }));
    expect(secondary.status).toBe(403);
    expect(secondary.data).toMatchObject({ message: expect.stringContaining("secondary rate limit") });
    expect(secondary.headers?.["retry-after"]).toBe("3");
    expect((await reader.rest.repos.get({ owner, repo })).status).toBe(200);
  });

  it("is read by Octokit's retry and throttling plugins as GitHub is", async () => {
    const limits: [string, number][] = [];
    const Client = Octokit.plugin(retry, throttling);
    const client = new Client({
      baseUrl: peer.baseUrl,
      auth: "r-token",
      // Rate limits are the throttling plugin's to wait out; the retry plugin would retry a 429 at once.
      retry: { retries: 2, retryAfterBaseValue: 1, doNotRetry: [400, 401, 403, 404, 410, 422, 429, 451] },
      throttle: {
        retryAfterBaseValue: 1,
        onRateLimit: (after: number) => (limits.push(["primary", after]), limits.length < 5),
        onSecondaryRateLimit: (after: number) => (limits.push(["secondary", after]), limits.length < 5),
      },
    });
    peer.injectFault({ kind: "rate-limit", retryAfterSeconds: 2 }, 1);
    peer.injectFault({ kind: "secondary-limit", retryAfterSeconds: 3 }, 1);
    peer.injectFault({ kind: "bad-gateway" }, 2);
    const before = peer.log.length;
    expect((await client.rest.repos.get({ owner, repo })).status).toBe(200);
    expect(peer.log.slice(before).map((e) => e.status)).toEqual([429, 403, 502, 502, 200]);
    expect(limits.map(([kind]) => kind)).toEqual(["primary", "secondary"]);
    expect(limits[0]![1]).toBeGreaterThanOrEqual(2);
    expect(limits[1]![1]).toBe(3);
  });

  it("catches a response that drifts from GitHub's schema", async () => {
    const pull = await reader.rest.pulls.get({ owner, repo, pull_number: 3 });
    const drifted = { ...pull.data, number: String(pull.data.number), head: { ...pull.data.head, sha: undefined } };
    const errors = openapi.errors("get", `${P}/pulls/{pull_number}`, 200, drifted);
    expect(errors).toEqual(expect.arrayContaining(["/number must be integer", "/head must have required property 'sha'"]));
  });
});

describe("GitHub peer lifecycle", () => {
  it("stops with a kept-alive connection open", async () => {
    const peer = await startGithubPeer();
    peer.addToken("t", "u", "read");
    const client = new Octokit({ baseUrl: peer.baseUrl, auth: "t" });
    await client.rest.users.getAuthenticated();
    const started = Date.now();
    await peer.stop();
    expect(Date.now() - started).toBeLessThan(2_000);
    expect((await answerOf(client.rest.users.getAuthenticated()).catch(() => ({ status: 0, data: null }))).status).toBe(0);
  });
});
