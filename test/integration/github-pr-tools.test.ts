import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FLOW_REPO, FLOW_REPO_URL, startGithubFlow, TOKENS, WRITE_WORKSPACE, type GithubFlow } from "../helpers/github-flow.ts";
import { doomedSecrets } from "../helpers/github-peers.ts";
import type { PeerTurn } from "../peers/llm-server.ts";

type Call = PeerTurn["toolCalls"] & object;

const WORKSPACE = { ...WRITE_WORKSPACE, intent: "write" };
/** The same roles on Secrets of their own, which the model deletes before its calls (see runWithoutSecrets). */
const DOOMED = { "doomed-read": TOKENS.read, "doomed-push": TOKENS.push, "doomed-forge": TOKENS.forge };
const DOOMED_WORKSPACE = { gitRepo: FLOW_REPO_URL, intent: "write", readCredentialRef: "doomed-read", publicationCredentialRef: "doomed-push", forgeCredentialRef: "doomed-forge" };

// The pull request lifecycle tools through a real server: a scripted model calls them, the server half
// reads the Task's Secret and calls the GitHub peer, whose log tells which token each request carried.
describe("GitHub pull request lifecycle tools", () => {
  let flow: GithubFlow;
  let runs = 0;
  let branches = 0;

  beforeAll(async () => {
    flow = await startGithubFlow({ ORKA_GITHUB_RETRY_BASE_MS: "1" });
  }, 30_000);
  afterAll(() => flow?.stop());

  /** An open pull request on a fresh branch; its number and head. */
  async function openPr(): Promise<{ number: number; sha: string; branch: string }> {
    const branch = `topic-${++branches}`;
    const sha = await flow.github.commit(FLOW_REPO, branch, { [`${branch}.txt`]: "line 1\nline 2\nline 3\n" });
    return { number: await flow.github.openPullRequest(FLOW_REPO, { head: branch, user: "dev" }), sha, branch };
  }

  /** Runs a Task whose model makes `calls` (one turn, or a function giving them when the turn comes); the Task's name is passed to `calls`. */
  async function run(calls: Call | ((task: string) => Call | Promise<Call>), workspace: Record<string, unknown> = WORKSPACE): Promise<any[]> {
    const name = `pr-tools-${++runs}`;
    const turn = async () => ({ toolCalls: typeof calls === "function" ? await calls(name) : calls });
    const { task, results } = await flow.run(name, [turn], { workspace, tools: ["check_pull_request_ci", "merge_pull_request", "auto_merge_pull_request", "post_review_comment", "create_pull_request"] });
    expect(task.status?.phase, task.status?.message).toBe("Succeeded");
    return results;
  }

  /**
   * Like run, on a workspace whose Secrets the checkout reads and the model then deletes before its
   * calls: a call that read one would fail on that instead. No git request follows the deletion.
   */
  async function runWithoutSecrets(calls: Call | ((task: string) => Call | Promise<Call>)): Promise<any[]> {
    const secrets = doomedSecrets(flow.api, DOOMED);
    await secrets.create();
    let gitMark = 0;
    const results = await run(async (task) => {
      await secrets.delete();
      gitMark = flow.gitPeer.requests.length;
      return typeof calls === "function" ? calls(task) : calls;
    }, DOOMED_WORKSPACE);
    expect(flow.gitPeer.requests.slice(gitMark)).toEqual([]);
    return results;
  }

  const requestsSince = (mark: number) => flow.github.log.slice(mark).map((e) => ({ call: `${e.method} ${decodeURIComponent(e.path.split("?")[0]!)}`, login: e.login, status: e.status }));

  describe("check_pull_request_ci", () => {
    it("reports every status of one attempt with the read credential", async () => {
      const none = await openPr();
      const red = await openPr();
      await flow.github.addCheckRun(FLOW_REPO, red.sha, { name: "lint", conclusion: "failure" });
      await flow.github.addCheckRun(FLOW_REPO, red.sha, { name: "unit", status: "in_progress" });
      const pending = await openPr();
      await flow.github.addCheckRun(FLOW_REPO, pending.sha, { name: "unit", status: "queued" });
      const green = await openPr();
      await flow.github.addCheckRun(FLOW_REPO, green.sha, { name: "unit" });
      await flow.github.addCheckRun(FLOW_REPO, green.sha, { name: "docs", conclusion: "neutral" });
      await flow.github.addStatus(FLOW_REPO, green.sha, { context: "legacy", state: "success" });
      const closed = await openPr();
      await flow.github.closePullRequest(FLOW_REPO, closed.number);
      const merged = await openPr();
      await flow.github.mergePullRequest(FLOW_REPO, merged.number);
      const mark = flow.github.log.length;
      const prs = [none, red, pending, green, closed, merged];
      const results = await run(prs.map((pr) => ({ name: "check_pull_request_ci", arguments: { pr_number: pr.number, repo_url: "https://github.com/ACME/app" } })));
      const flags = { checks_passed: false, checks_failed: false, checks_pending: false };
      expect(results).toEqual([
        { status: "no_checks", pr_number: none.number, head_sha: none.sha, ...flags, message: "no CI checks have been registered yet for this pull request (may still be queueing)" },
        { status: "failed", pr_number: red.number, head_sha: red.sha, ...flags, checks_failed: true, checks_details: "lint (conclusion=failure); unit (status=in_progress)", message: "one or more CI checks failed" },
        { status: "pending", pr_number: pending.number, head_sha: pending.sha, ...flags, checks_pending: true, checks_details: "unit (status=queued)", message: "one or more CI checks are still pending" },
        { status: "passed", pr_number: green.number, head_sha: green.sha, ...flags, checks_passed: true, message: "all CI checks passed" },
        { status: "closed", pr_number: closed.number, head_sha: closed.sha, ...flags, message: "pull request is closed" },
        { status: "merged", pr_number: merged.number, head_sha: merged.sha, ...flags, message: "pull request is already merged" },
      ]);
      expect(new Set(requestsSince(mark).map((r) => r.login))).toEqual(new Set(["reader"]));
    });

    it("keeps polling while no checks are registered, until CI registers and passes", async () => {
      const pr = await openPr();
      const mark = flow.github.log.length;
      // CI registers once the tool has looked twice and found nothing (a bounded wait: 15 s at most).
      const lateCi = (async () => {
        const looked = () => requestsSince(mark).filter((r) => r.call.includes(`/commits/${pr.sha}/check-runs`)).length;
        for (const deadline = Date.now() + 15_000; looked() < 2 && Date.now() < deadline; ) await new Promise((wait) => setTimeout(wait, 20));
        await flow.github.addCheckRun(FLOW_REPO, pr.sha, { name: "late-ci" });
      })();
      const [result] = await run(() => {
        return [{ name: "check_pull_request_ci", arguments: { pr_number: pr.number, wait_timeout: "15s", poll_interval: "100ms" } }];
      });
      await lateCi;
      expect(result).toMatchObject({ status: "passed", checks_passed: true, wait_timed_out: false, message: "all CI checks passed" });
      expect(result.attempts).toBeGreaterThan(2);
    });

    it("times out as CI_PENDING on pending checks, and as no_checks when none ever registered", async () => {
      const pending = await openPr();
      await flow.github.addCheckRun(FLOW_REPO, pending.sha, { name: "slow", status: "in_progress" });
      const empty = await openPr();
      const results = await run([
        { name: "check_pull_request_ci", arguments: { pr_number: pending.number, wait_timeout: "500ms", poll_interval: "100ms" } },
        // The first look must end before the deadline for the final look at it to come: a second, even on a busy machine.
        { name: "check_pull_request_ci", arguments: { pr_number: empty.number, wait_timeout: "1s", poll_interval: "5s" } },
      ]);
      expect(results[0]).toMatchObject({
        status: "pending", checks_pending: true, checks_details: "slow (status=in_progress)", wait_timed_out: true, message: "CI_PENDING: timed out after 500ms waiting for CI checks to finish",
      });
      expect(results[1]).toMatchObject({ status: "no_checks", checks_pending: false, wait_timed_out: true, attempts: 2 });
      expect(results[1].message).toMatch(/^no CI checks have been registered for this pull request after 1s; treating as terminal no_checks/);
    });

    it("skips GitHub server errors and rate limits while waiting, and counts the attempts; without a wait they are errors", async () => {
      const pr = await openPr();
      await flow.github.addCheckRun(FLOW_REPO, pr.sha, { name: "unit" });
      const pullPath = new RegExp(`/pulls/${pr.number}$`);
      // Each failed attempt is four 502s: the GET and the client's three retries.
      flow.github.injectFault({ kind: "bad-gateway" }, 8, { method: "GET", pathPattern: pullPath });
      const [waited] = await run([{ name: "check_pull_request_ci", arguments: { pr_number: pr.number, wait_timeout: "15s", poll_interval: "50ms" } }]);
      expect(waited).toMatchObject({ status: "passed", attempts: 3, wait_timed_out: false });

      // A rate limit that asks for more than a minute is not waited out by the client: the poll is skipped.
      flow.github.injectFault({ kind: "rate-limit", retryAfterSeconds: 120 }, 1, { method: "GET", pathPattern: pullPath });
      const [limited] = await run([{ name: "check_pull_request_ci", arguments: { pr_number: pr.number, wait_timeout: "15s", poll_interval: "50ms" } }]);
      expect(limited).toMatchObject({ status: "passed", attempts: 2 });

      flow.github.injectFault({ kind: "bad-gateway" }, 4, { method: "GET", pathPattern: pullPath });
      const [once] = await run([{ name: "check_pull_request_ci", arguments: { pr_number: pr.number } }]);
      expect(once).toMatch(new RegExp(`^Error executing tool: failed to get pull request #${pr.number}: GitHub API returned 502`));

      flow.github.injectFault({ kind: "bad-gateway" }, 1000, { method: "GET", pathPattern: pullPath });
      const [unknown] = await run([{ name: "check_pull_request_ci", arguments: { pr_number: pr.number, wait_timeout: "400ms", poll_interval: "100ms" } }]);
      flow.github.clearFaults();
      expect(unknown).toMatchObject({ status: "unknown", pr_number: pr.number, wait_timed_out: true, checks_passed: false });
      expect(unknown.message).toMatch(/^timed out after 400ms waiting for CI status; last transient error: failed to get pull request #\d+: GitHub API returned 502/);
      expect(unknown.head_sha).toBeUndefined();
    });

    it("refuses bad durations and a missing pr_number before reading the Task's Secrets or calling GitHub", async () => {
      const mark = flow.github.log.length;
      const results = await runWithoutSecrets(
        [
          { name: "check_pull_request_ci", arguments: { pr_number: 1, wait_timeout: "-1s" } },
          { name: "check_pull_request_ci", arguments: { pr_number: 1, wait_timeout: "1m", poll_interval: "0s" } },
          { name: "check_pull_request_ci", arguments: { pr_number: 1, wait_timeout: "a while" } },
          { name: "check_pull_request_ci", arguments: { pr_number: 0 } },
          { name: "check_pull_request_ci", arguments: { pr_number: 1, repo_url: "https://github.com/acme/other" } },
        ],
      );
      expect(results).toEqual([
        "Error executing tool: wait_timeout must be non-negative",
        "Error executing tool: poll_interval must be positive",
        expect.stringMatching(/^Error executing tool: invalid wait_timeout "a while": /),
        "Error executing tool: pr_number is required",
        "Error executing tool: repo_url repository acme/other does not match permitted repository scope task workspace=acme/app",
      ]);
      expect(flow.github.log.length).toBe(mark);
    });
  });

  describe("merge_pull_request", () => {
    it("reports a red pull request without merging it, and merges a green one for real with the forge credential", async () => {
      const red = await openPr();
      await flow.github.addCheckRun(FLOW_REPO, red.sha, { name: "unit", conclusion: "failure" });
      const unchecked = await openPr();
      const green = await openPr();
      await flow.github.addCheckRun(FLOW_REPO, green.sha, { name: "unit" });
      const mark = flow.github.log.length;
      const results = await run((task) => [
        { name: "merge_pull_request", arguments: { task_name: task, pr_number: red.number } },
        { name: "merge_pull_request", arguments: { task_name: task, pr_number: unchecked.number } },
        { name: "merge_pull_request", arguments: { task_name: task, pr_number: green.number, merge_method: "rebase" } },
        { name: "merge_pull_request", arguments: { task_name: task, pr_number: green.number } },
      ]);
      expect(results[0]).toEqual({ sha: "", merged: false, checks_passed: false, checks_details: "unit (conclusion=failure)", message: "CI checks have not all passed: unit (conclusion=failure)" });
      expect(results[1]).toMatchObject({ merged: false, message: "CI checks have not all passed: no CI checks configured" });
      const head = await flow.github.head(FLOW_REPO, "main");
      expect(results[2]).toEqual({ sha: head, merged: true, checks_passed: true, message: "Pull request merged successfully" });
      expect(results[3]).toMatchObject({ merged: true, message: "Pull request was already merged" });
      const requests = requestsSince(mark);
      expect(requests.filter((r) => r.call.startsWith("PUT"))).toEqual([{ call: `PUT /repos/acme/app/pulls/${green.number}/merge`, login: "orka-forge", status: 200 }]);
      expect(new Set(requests.map((r) => r.login))).toEqual(new Set(["orka-forge"]));
    });

    it("refuses an unknown merge method, a missing task_name, and a Task without forgeCredentialRef, sending nothing", async () => {
      const mark = flow.github.log.length;
      const results = await run(
        (task) => [
          { name: "merge_pull_request", arguments: { task_name: task, pr_number: 1, merge_method: "octopus" } },
          { name: "merge_pull_request", arguments: { pr_number: 1 } },
          { name: "merge_pull_request", arguments: { task_name: task, pr_number: 1 } },
          { name: "auto_merge_pull_request", arguments: { task_name: task, pr_number: 1, timeout: "0s" } },
        ],
        { gitRepo: FLOW_REPO_URL, readCredentialRef: "gh-read" },
      );
      expect(results).toEqual([
        'Error executing tool: invalid merge_method "octopus"',
        "Error executing tool: task_name and pr_number are required",
        expect.stringMatching(/^Error executing tool: task pr-tools-\d+ workspace has no forgeCredentialRef configured$/),
        "Error executing tool: timeout must be positive",
      ]);
      expect(flow.github.log.length).toBe(mark);
    });
  });

  describe("auto_merge_pull_request", () => {
    it("merges once CI passes, following a force-push and skipping 502s and a rate limit", async () => {
      const pr = await openPr();
      const mark = flow.github.log.length;
      await flow.github.addCheckRun(FLOW_REPO, pr.sha, { name: "unit", status: "in_progress" });
      let rewritten = "";
      const [result] = await run(async (task) => {
        setTimeout(async () => {
          // Someone force-pushes the head; CI runs green on the new one.
          rewritten = await flow.github.commit(FLOW_REPO, `${pr.branch}-v2`, { "v2.txt": "rewritten\n" });
          await flow.github.forcePush(FLOW_REPO, pr.branch, rewritten);
          flow.github.injectFault({ kind: "bad-gateway" }, 4, { method: "GET", pathPattern: /\/check-runs$/ });
          flow.github.injectFault({ kind: "rate-limit", retryAfterSeconds: 120 }, 1, { method: "GET", pathPattern: new RegExp(`/pulls/${pr.number}$`) });
          await flow.github.addCheckRun(FLOW_REPO, rewritten, { name: "unit" });
        }, 400);
        return [{ name: "auto_merge_pull_request", arguments: { task_name: task, pr_number: pr.number, merge_method: "merge", timeout: "20s" } }];
      });
      expect(result).toEqual({ outcome: "merged", pr_number: pr.number, sha: await flow.github.head(FLOW_REPO, "main"), merged: true, checks_passed: true, message: "Pull request merged successfully" });
      expect(flow.github.pullRequest(FLOW_REPO, pr.number).pull).toMatchObject({ merged: true, frozenHeadSha: rewritten });
      const statuses = requestsSince(mark).map((r) => r.status);
      expect(statuses).toContain(429);
      expect(statuses.filter((status) => status === 502)).toHaveLength(4);
    });

    it("reports ci_failed at once, closed, already_merged, and a timeout with registered checks still pending", async () => {
      const red = await openPr();
      await flow.github.addCheckRun(FLOW_REPO, red.sha, { name: "unit", conclusion: "cancelled" });
      const closed = await openPr();
      await flow.github.closePullRequest(FLOW_REPO, closed.number);
      const merged = await openPr();
      const mergeSha = await flow.github.mergePullRequest(FLOW_REPO, merged.number);
      const waiting = await openPr();
      const results = await run((task) => [
        { name: "auto_merge_pull_request", arguments: { task_name: task, pr_number: red.number, timeout: "30m" } },
        { name: "auto_merge_pull_request", arguments: { task_name: task, pr_number: closed.number } },
        { name: "auto_merge_pull_request", arguments: { task_name: task, pr_number: merged.number } },
        { name: "auto_merge_pull_request", arguments: { task_name: task, pr_number: waiting.number, timeout: "400ms" } },
      ]);
      const notMerged = { sha: "", merged: false, checks_passed: false };
      expect(results).toEqual([
        { outcome: "ci_failed", pr_number: red.number, ...notMerged, checks_details: "unit (conclusion=cancelled)", message: "CI checks failed: unit (conclusion=cancelled)" },
        { outcome: "closed", pr_number: closed.number, ...notMerged, message: "Pull request is closed" },
        { outcome: "already_merged", pr_number: merged.number, sha: mergeSha, merged: true, checks_passed: true, message: "Pull request was already merged" },
        { outcome: "timeout", pr_number: waiting.number, ...notMerged, message: "timed out after 400ms waiting for CI checks to pass" },
      ]);
    });
    it("stops waiting when its Task is cancelled, and merges nothing", async () => {
      const pr = await openPr();
      await flow.github.addCheckRun(FLOW_REPO, pr.sha, { name: "unit", status: "in_progress" });
      const name = `pr-tools-${++runs}`;
      flow.llm.script(`m-${name}`, [{ toolCalls: [{ name: "auto_merge_pull_request", arguments: { task_name: name, pr_number: pr.number, timeout: "30m" } }] }, { text: "done" }]);
      const mark = flow.github.log.length;
      await flow.api("POST", "/tasks", { name, type: "ai", prompt: "merge it", ai: { providerRef: { name: "peer" }, model: `m-${name}`, tools: ["auto_merge_pull_request"] }, workspace: WORKSPACE });
      const polls = () => requestsSince(mark).filter((r) => r.call === `GET /repos/acme/app/pulls/${pr.number}`).length;
      for (let waited = 0; polls() < 3 && waited < 10_000; waited += 50) await new Promise((r) => setTimeout(r, 50));
      expect(polls()).toBeGreaterThanOrEqual(3);
      const cancelled = Date.now();
      await flow.api("POST", `/tasks/${name}/cancel`);
      expect((await flow.waitFor(name, ["Cancelled", "Succeeded", "Failed"], 10_000)).status?.phase).toBe("Cancelled");
      expect(Date.now() - cancelled).toBeLessThan(5_000);
      const after = polls();
      await new Promise((r) => setTimeout(r, 400));
      expect(polls()).toBe(after);
      expect(requestsSince(mark).filter((r) => r.call.startsWith("PUT"))).toEqual([]);
    });
  });

  describe("post_review_comment", () => {
    it("posts a review whose line comments land on the pull request, with the forge credential only", async () => {
      const pr = await openPr();
      const mark = flow.github.log.length;
      const [posted, outside] = await run([
        { name: "post_review_comment", arguments: { pr_number: pr.number, body: "Two notes", event: "REQUEST_CHANGES", comments: [{ path: `${pr.branch}.txt`, line: 2, body: "rename this" }] } },
        { name: "post_review_comment", arguments: { pr_number: pr.number, body: "far away", event: "COMMENT", comments: [{ path: `${pr.branch}.txt`, line: 30, body: "no such line" }] } },
      ]);
      expect(posted).toEqual({ review_id: expect.any(Number), status: "submitted", html_url: `${FLOW_REPO_URL}/pull/${pr.number}#pullrequestreview-${posted.review_id}` });
      expect(flow.github.pullRequest(FLOW_REPO, pr.number).pull.reviews).toEqual([
        expect.objectContaining({ id: posted.review_id, body: "Two notes", state: "CHANGES_REQUESTED", comments: [{ path: `${pr.branch}.txt`, line: 2, body: "rename this" }] }),
      ]);
      expect(outside).toMatch(/^Error executing tool: failed to post review: GitHub API returned 422: .*Line could not be resolved.*nothing was posted; each line comment must name a path and a new-file line that the pull request's diff changes or shows/);
      // Each review was sent once (never retried), with the forge credential.
      expect(requestsSince(mark)).toEqual([
        { call: `POST /repos/acme/app/pulls/${pr.number}/reviews`, login: "orka-forge", status: 200 },
        { call: `POST /repos/acme/app/pulls/${pr.number}/reviews`, login: "orka-forge", status: 422 },
      ]);
    });

    it("refuses a bad event, bad line comments and an out-of-scope repository before any Secret read or request", async () => {
      const mark = flow.github.log.length;
      const results = await runWithoutSecrets(
        [
          { name: "post_review_comment", arguments: { pr_number: 1, body: "x", event: "LGTM" } },
          { name: "post_review_comment", arguments: { pr_number: 1, body: "x" } },
          { name: "post_review_comment", arguments: { pr_number: 1, body: "x", event: "COMMENT", comments: [{ path: "../../etc/passwd", line: 1, body: "x" }] } },
          { name: "post_review_comment", arguments: { pr_number: 1, body: "x", event: "COMMENT", comments: [{ path: "a.txt", line: 0, body: "x" }] } },
          { name: "post_review_comment", arguments: { pr_number: 1, body: "x", event: "COMMENT", repo_url: "https://github.com/evil/app" } },
        ],
      );
      expect(results).toEqual([
        'Error executing tool: invalid event value "LGTM": must be APPROVE, REQUEST_CHANGES, or COMMENT',
        "Error executing tool: pr_number, body, and event are required",
        "Error executing tool: comments[0]: path must be relative to the repository root, without '..'",
        "Error executing tool: comments[0]: line must be a new-file line number (1 or more)",
        "Error executing tool: repo_url repository evil/app does not match permitted repository scope task workspace=acme/app",
      ]);
      expect(flow.github.log.length).toBe(mark);
    });
  });

  describe("create_pull_request", () => {
    it("refuses without a verified receipt and on another branch before reading a Secret, and when the branch moved, opening nothing", async () => {
      const pushed = await flow.github.commit(FLOW_REPO, "verified", { "v.txt": "verified\n" });
      const receipt = {
        state: "VerifiedExact" as const, outcome: "VerifiedExact" as const, publicationID: "pub-7", publicationRepository: FLOW_REPO_URL, branch: "verified",
        expectedCommitSHA: pushed, verifiedRemoteSHA: pushed, artifactDigest: "sha256:77",
      };
      const mark = flow.github.log.length;
      const results = await runWithoutSecrets(async (task) => {
        const create = (title: string, head = "verified") => ({ name: "create_pull_request", arguments: { task_name: task, head_branch: head, base_branch: "main", title } });
        return [
          create("no receipt yet"),
          create("   "),
          create("x".repeat(257)),
          { name: "create_pull_request", arguments: { task_name: task, head_branch: "verified" } },
        ];
      });
      expect(results).toEqual([
        // The checkout read the publication branch before the model ran: the delivery is only Prepared.
        expect.stringMatching(/^Error executing tool: task pr-tools-\d+ has no verified delivery receipt \(outcome=Prepared\)$/),
        "Error executing tool: title must not be blank",
        "Error executing tool: title exceeds 256 characters",
        "Error executing tool: task_name, head_branch, base_branch, and title are required",
      ]);
      // Now with the receipt: a branch mismatch, then a branch someone moved after verification.
      const name = `pr-tools-${runs + 1}`;
      const later = await runWithoutSecrets(async (task) => {
        await flow.writeDelivery(task, receipt);
        return [{ name: "create_pull_request", arguments: { task_name: task, head_branch: "other", base_branch: "main", title: "x" } }];
      });
      expect(later).toEqual([`Error executing tool: head_branch "other" is not the verified delivery branch "verified" of task ${name}`]);
      await flow.github.commit(FLOW_REPO, "verified", { "late.txt": "pushed after verification\n" });
      const moved = await run(async (task) => {
        await flow.writeDelivery(task, receipt);
        return [{ name: "create_pull_request", arguments: { task_name: task, head_branch: "verified", base_branch: "main", title: "x" } }];
      });
      expect(moved).toEqual(["Error executing tool: publication branch moved since verified delivery"]);
      expect(requestsSince(mark).filter((r) => r.call.startsWith("POST"))).toEqual([]);
      expect(new Set(requestsSince(mark).map((r) => r.login))).toEqual(new Set(["orka-forge"]));
    });
  });
});
