import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { TaskSpec, TaskStatus } from "../../src/resources/task.ts";
import { FLOW_REPO, FLOW_REPO_URL, startGithubFlow, TOKENS, WRITE_WORKSPACE, type GithubFlow } from "../helpers/github-flow.ts";
import { toolResultsOf } from "../peers/llm-server.ts";
import { git } from "../peers/git/run-git.ts";

/** The last tool result the model got, parsed; an error result fails the turn with its text. */
const lastResult = (body: Record<string, unknown>) => {
  const text = toolResultsOf(body).at(-1) ?? "";
  if (!text.startsWith("{")) throw new Error(text);
  return JSON.parse(text);
};

// The whole path of a coordinator's change, through a real server: a delegated coder edits its checkout,
// Orka's publisher pushes the branch and reads it back (the verified receipt), the coordinator opens its
// pull request (twice: the same one), waits for CI to turn green, and auto-merges it; a clone then shows
// the merge on main.
describe("a coordinator carries a verified branch to a merged pull request", () => {
  let flow: GithubFlow;
  let work: string;

  beforeAll(async () => {
    flow = await startGithubFlow();
    work = await mkdtemp(path.join(os.tmpdir(), "orka-pr-flow-"));
    for (const agent of [
      { metadata: { name: "lead" }, spec: { providerRef: { name: "peer" }, coordination: { enabled: true, allowedAgents: [{ name: "coder" }] } } },
      { metadata: { name: "coder" }, spec: { providerRef: { name: "peer" }, model: { name: "m-coder" }, tools: [{ name: "file_write" }] } },
    ]) {
      expect((await flow.api("POST", "/agents", agent)).status).toBe(201);
    }
    flow.llm.script("m-coder", [
      { toolCalls: [{ name: "file_write", arguments: { path: "/workspace/feature.txt", content: "the feature\n" } }] },
      { text: "feature written" },
    ]);
  }, 30_000);
  afterAll(async () => {
    await flow?.stop();
    await rm(work, { recursive: true, force: true });
  });

  /** The coder's receipt, as Orka's publisher recorded it. */
  async function receiptOf(child: string) {
    return (await flow.orka.store.get<TaskSpec, TaskStatus>("Task", "default", child))!.status!.delivery!;
  }

  it("creates, finds again, waits for green CI and auto-merges; the merge is on main", async () => {
    let child = "";
    let pushed = "";
    let prNumber = 0;
    const logStart = flow.github.log.length;
    const { task, results } = await flow.run(
      "lead-run",
      [
        () => ({ toolCalls: [{ name: "delegate_task", arguments: { agent: "coder", prompt: "write the feature", workspace: { ...WRITE_WORKSPACE, intent: "write", pushBranch: "feature" } } }] }),
        (body) => {
          child = lastResult(body).taskName;
          return { toolCalls: [{ name: "wait_for_tasks", arguments: { tasks: [child], timeout: "30s" } }] };
        },
        async (body) => {
          expect(lastResult(body).results[0]).toMatchObject({ task: child, phase: "Succeeded" });
          const receipt = await receiptOf(child);
          expect(receipt).toMatchObject({ outcome: "VerifiedExact", branch: "feature", publicationRepository: FLOW_REPO_URL });
          pushed = receipt.verifiedRemoteSHA!;
          expect(receipt.expectedCommitSHA).toBe(pushed);
          const args = { task_name: child, head_branch: "feature", base_branch: "main", title: "Add the feature", body: "Delivered and verified by Orka" };
          return { toolCalls: [{ name: "create_pull_request", arguments: args }] };
        },
        (body) => {
          prNumber = lastResult(body).pr_number;
          return { toolCalls: [{ name: "create_pull_request", arguments: { task_name: child, head_branch: "refs/heads/feature", base_branch: "main", title: "Again" } }] };
        },
        async () => {
          const build = await flow.github.addCheckRun(FLOW_REPO, pushed, { name: "build", status: "in_progress" });
          // CI finishes while the tool waits: once the tool has been answered that it is still running
          // (a fixed delay let a slow machine read it only after it had finished).
          const mark = flow.github.log.length;
          const seenRunning = () => flow.github.log.slice(mark).some((entry) => entry.path.includes("/check-runs") && entry.status === 200);
          void vi
            .waitFor(() => expect(seenRunning()).toBe(true), { timeout: 20_000, interval: 20 })
            .then(() => flow.github.updateCheckRun(FLOW_REPO, build, { conclusion: "success" }));
          return { toolCalls: [{ name: "check_pull_request_ci", arguments: { task_name: child, pr_number: prNumber, wait_timeout: "20s", poll_interval: "100ms" } }] };
        },
        () => ({ toolCalls: [{ name: "auto_merge_pull_request", arguments: { task_name: child, pr_number: prNumber, merge_method: "merge", commit_title: "Merge the feature" } }] }),
      ],
      { agentRef: "lead" },
    );
    expect(task.status?.phase, task.status?.message).toBe("Succeeded");
    const [, , created, again, ci, merged] = results;
    expect(created).toEqual({ pr_url: `${FLOW_REPO_URL}/pull/${prNumber}`, pr_number: prNumber, status: "created" });
    expect(again).toEqual({ ...created, status: "existing" });
    expect(ci).toMatchObject({ status: "passed", pr_number: prNumber, head_sha: pushed, checks_passed: true, wait_timed_out: false, message: "all CI checks passed" });
    expect(ci.attempts).toBeGreaterThan(1);
    expect(merged).toMatchObject({ outcome: "merged", merged: true, checks_passed: true, message: "Pull request merged successfully" });

    const clone = path.join(work, "after-merge");
    await git(["clone", "--quiet", FLOW_REPO_URL, clone], { env: flow.gitPeer.clientEnv(TOKENS.read) });
    expect(await git(["rev-parse", "HEAD"], { cwd: clone })).toBe(merged.sha);
    expect(await git(["log", "-1", "--format=%s", "HEAD"], { cwd: clone })).toBe("Merge the feature");
    expect(await git(["rev-parse", "HEAD^2"], { cwd: clone })).toBe(pushed);

    // Writes used only the child's forge credential; reads its read credential; the push credential never reached the API.
    const requests = flow.github.log.slice(logStart).map((e) => ({ call: `${e.method} ${decodeURIComponent(e.path.split("?")[0]!)}`, login: e.login }));
    const writes = requests.filter((r) => !r.call.startsWith("GET"));
    expect(writes).toEqual([
      { call: "POST /repos/acme/app/pulls", login: "orka-forge" },
      { call: "POST /repos/acme/app/pulls", login: "orka-forge" },
      { call: `PUT /repos/acme/app/pulls/${prNumber}/merge`, login: "orka-forge" },
    ]);
    // check_pull_request_ci read with the read credential; the write tools read with the forge credential too.
    expect(requests.some((r) => r.call.includes("/check-runs") && r.login === "reader")).toBe(true);
    expect(new Set(requests.map((r) => r.login))).toEqual(new Set(["reader", "orka-forge"]));
    // The tool results the model saw carry no token.
    expect(JSON.stringify(results)).not.toMatch(/token-0123456789/);
  }, 60_000);
});

// createPR: the publisher itself opens the pull request of a verified publication, with the workspace's
// text and the forge credential, and records it in the receipt; a forge credential GitHub refuses
// leaves the branch published and fails the Task, saying why.
describe("the workspace publisher opens the pull request a workspace asks for", () => {
  let flow: GithubFlow;
  const writeFeature = (file: string) => ({ toolCalls: [{ name: "file_write", arguments: { path: `/workspace/${file}`, content: `${file}\n` } }] });
  const prWorkspace = (branch: string, forge: string) => ({
    ...WRITE_WORKSPACE, intent: "write", pushBranch: branch, forgeCredentialRef: forge,
    createPR: true, prBaseBranch: "main", prTitle: "Add the report", prBody: "Written from the request.",
  });

  beforeAll(async () => {
    flow = await startGithubFlow();
    // A forge Secret whose token may only read the repository.
    expect((await flow.api("POST", "/secrets", { name: "gh-weak-forge", stringData: { token: TOKENS.read } })).status).toBe(201);
  }, 30_000);
  afterAll(() => flow?.stop());

  it("opens one pull request with the workspace's title and body and the forge credential, and records it", async () => {
    const logStart = flow.github.log.length;
    const { task } = await flow.run("auto-pr", [writeFeature("report.txt")], { workspace: prWorkspace("report", "gh-forge"), tools: ["file_write"] });
    expect(task.status?.phase, task.status?.message).toBe("Succeeded");
    const delivery = task.status!.delivery!;
    expect(delivery).toMatchObject({ outcome: "VerifiedExact", branch: "report", prReceipt: { state: "open", headSHA: delivery.verifiedRemoteSHA, status: "created" } });
    const pull = flow.github.pullRequest(FLOW_REPO, delivery.prReceipt!.number);
    expect(delivery.prReceipt!.url).toBe(`${FLOW_REPO_URL}/pull/${pull.number}`);
    expect({ title: pull.title, head: pull.pull.head, base: pull.pull.base, author: pull.user.login }).toEqual({ title: "Add the report", head: "report", base: "main", author: "orka-forge" });
    expect(pull.body).toBe(`Written from the request.\n\n<!-- orka.publisher.pr-intent.v1 key=${delivery.publicationID} -->`);
    const writes = flow.github.log.slice(logStart).filter((e) => e.method !== "GET").map((e) => `${e.method} ${e.path} ${e.login}`);
    expect(writes).toEqual(["POST /repos/acme/app/pulls orka-forge"]);
    const events = (await flow.api("GET", "/tasks/auto-pr/events?type=PullRequestOpened")).body.events;
    expect(events.map((e: { summary: string }) => e.summary)).toEqual([`pull request #${pull.number} opened: ${delivery.prReceipt!.url}`]);
  }, 60_000);

  it("fails the Task when GitHub refuses the forge credential, with the branch still published", async () => {
    const { task } = await flow.run("refused-pr", [writeFeature("notes.txt")], { workspace: prWorkspace("notes", "gh-weak-forge"), tools: ["file_write"] });
    expect(task.status?.phase).toBe("Failed");
    expect(task.status?.message).toMatch(/^delivery PullRequestFailed: the branch was published and verified, but its pull request could not be opened: .*GitHub API returned 403/);
    expect(task.status?.delivery).toMatchObject({ outcome: "VerifiedExact", reason: "PullRequestFailed" });
    expect(task.status?.delivery?.prReceipt).toBeUndefined();
    expect(await flow.github.head(FLOW_REPO, "notes")).toBe(task.status?.delivery?.verifiedRemoteSHA);
    expect(task.status?.message).not.toContain(TOKENS.read);
  }, 60_000);
});
