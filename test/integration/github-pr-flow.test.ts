import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parentLink } from "../../src/controller/parent-link.ts";
import { API_VERSION } from "../../src/resources/meta.ts";
import { DEFAULT_PRIORITY, type TaskSpec, type TaskStatus } from "../../src/resources/task.ts";
import { FLOW_REPO, FLOW_REPO_URL, startGithubFlow, TOKENS, WRITE_WORKSPACE, type GithubFlow } from "../helpers/github-flow.ts";
import { toolResultsOf } from "../peers/llm-server.ts";
import { git } from "../peers/git/run-git.ts";

/** The last tool result the model got, parsed; an error result fails the turn with its text. */
const lastResult = (body: Record<string, unknown>) => {
  const text = toolResultsOf(body).at(-1) ?? "";
  if (!text.startsWith("{")) throw new Error(text);
  return JSON.parse(text);
};

// The whole path of a coordinator's change, through a real server: a child's branch is pushed for real
// (the publisher's receipt is the fixture), the coordinator opens its pull request (twice: the same
// one), waits for CI to turn green, and auto-merges it; a clone then shows the merge on main.
describe("a coordinator carries a verified branch to a merged pull request", () => {
  let flow: GithubFlow;
  let work: string;

  beforeAll(async () => {
    flow = await startGithubFlow();
    work = await mkdtemp(path.join(os.tmpdir(), "orka-pr-flow-"));
    for (const agent of [
      { metadata: { name: "lead" }, spec: { providerRef: { name: "peer" }, coordination: { enabled: true, allowedAgents: [{ name: "coder" }] } } },
      { metadata: { name: "coder" }, spec: { providerRef: { name: "peer" }, model: { name: "m-coder" } } },
    ]) {
      expect((await flow.api("POST", "/agents", agent)).status).toBe(201);
    }
    flow.llm.script("m-coder", [{ text: "feature written" }]);
  }, 30_000);
  afterAll(async () => {
    await flow?.stop();
    await rm(work, { recursive: true, force: true });
  });

  /**
   * The coder child, linked to its coordinator as delegate_task links it. (delegate_task gives a
   * workspace only to coding-agent children, whose runtimes these tests do not have.)
   */
  async function createChild(parent: string): Promise<string> {
    const lead = (await flow.orka.store.get<TaskSpec, TaskStatus>("Task", "default", parent))!;
    const name = `${parent}-coder`;
    await flow.orka.store.create<TaskSpec, TaskStatus>({
      apiVersion: API_VERSION,
      kind: "Task",
      metadata: { name, namespace: "default", ...parentLink(lead, "default") },
      spec: { type: "ai", priority: DEFAULT_PRIORITY, prompt: "write the feature", ai: { providerRef: { name: "peer" }, model: "m-coder" }, workspace: { ...WRITE_WORKSPACE, intent: "write", pushBranch: "feature" } },
    });
    return name;
  }

  /** What Orka's publisher does for the child: push its branch with the publication credential, then record what it read back. */
  async function publish(child: string): Promise<string> {
    const dir = path.join(work, "child-checkout");
    await git(["clone", "--quiet", FLOW_REPO_URL, dir], { env: flow.gitPeer.clientEnv(TOKENS.push) });
    await writeFile(path.join(dir, "feature.txt"), "the feature\n");
    await git(["add", "feature.txt"], { cwd: dir });
    await git(["commit", "--quiet", "-m", "Add the feature"], { cwd: dir, env: flow.gitPeer.clientEnv() });
    await git(["push", "--quiet", "origin", "HEAD:refs/heads/feature"], { cwd: dir, env: flow.gitPeer.clientEnv(TOKENS.push) });
    const sha = await git(["rev-parse", "HEAD"], { cwd: dir });
    await flow.writeDelivery(child, {
      state: "VerifiedExact", outcome: "VerifiedExact", publicationID: `pub-${child}`, publicationRepository: FLOW_REPO_URL, branch: "feature",
      expectedCommitSHA: sha, verifiedRemoteSHA: sha, artifactDigest: "sha256:0f0f", verifiedAt: new Date().toISOString(),
    });
    return sha;
  }

  it("creates, finds again, waits for green CI and auto-merges; the merge is on main", async () => {
    let child = "";
    let pushed = "";
    let prNumber = 0;
    const logStart = flow.github.log.length;
    const { task, results } = await flow.run(
      "lead-run",
      [
        async () => {
          child = await createChild("lead-run");
          return { toolCalls: [{ name: "wait_for_tasks", arguments: { tasks: [child], timeout: "30s" } }] };
        },
        async () => {
          pushed = await publish(child);
          const args = { task_name: child, head_branch: "feature", base_branch: "main", title: "Add the feature", body: "Delivered and verified by Orka" };
          return { toolCalls: [{ name: "create_pull_request", arguments: args }] };
        },
        (body) => {
          prNumber = lastResult(body).pr_number;
          return { toolCalls: [{ name: "create_pull_request", arguments: { task_name: child, head_branch: "refs/heads/feature", base_branch: "main", title: "Again" } }] };
        },
        async () => {
          const build = await flow.github.addCheckRun(FLOW_REPO, pushed, { name: "build", status: "in_progress" });
          // CI finishes while the tool waits.
          setTimeout(() => flow.github.updateCheckRun(FLOW_REPO, build, { conclusion: "success" }), 700);
          return { toolCalls: [{ name: "check_pull_request_ci", arguments: { task_name: child, pr_number: prNumber, wait_timeout: "20s", poll_interval: "100ms" } }] };
        },
        () => ({ toolCalls: [{ name: "auto_merge_pull_request", arguments: { task_name: child, pr_number: prNumber, merge_method: "merge", commit_title: "Merge the feature" } }] }),
      ],
      { agentRef: "lead" },
    );
    expect(task.status?.phase, task.status?.message).toBe("Succeeded");
    const [, created, again, ci, merged] = results;
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
