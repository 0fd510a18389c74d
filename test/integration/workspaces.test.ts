import { createHash } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startGitPeer, type GitPeer } from "../peers/git-server.ts";
import { git as gitCli, isolatedGitEnv } from "../peers/git/run-git.ts";
import { toolResultsOf, type LlmPeer, type ScriptedPeerTurn } from "../peers/llm-server.ts";
import type { OrkaUnderTest } from "../helpers/orka-server.ts";
import { startOrkaWithPeer } from "../helpers/orka-with-peer.ts";

const REPO = "https://github.com/o/app";
const TOKENS = {
  read: "ghp_readerTOKEN0000000000000000000000001",
  publicationRead: "ghp_pubreadTOKEN000000000000000000000002",
  push: "ghp_pusherTOKEN0000000000000000000000003",
  readOnlyPush: "ghp_weakpushTOKEN00000000000000000000004",
};
/** Every form a token could leak in: itself, and inside the Basic header git would send. */
const leakForms = Object.values(TOKENS).flatMap((token) => [token, Buffer.from(`x-access-token:${token}`).toString("base64")]);
const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

/** Every file under `dir` (bounded), as text. */
function filesUnder(dir: string, limit = 5_000): { path: string; text: string }[] {
  const found: { path: string; text: string }[] = [];
  const walk = (current: string) => {
    for (const entry of readdirSync(current, { withFileTypes: true })) {
      if (found.length >= limit) return;
      const path = join(current, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.isFile() && statSync(path).size < 16 * 1024 * 1024) found.push({ path, text: readFileSync(path).toString("latin1") });
    }
  };
  walk(dir);
  return found;
}
const leaksIn = (text: string) => leakForms.filter((form) => text.includes(form));

// Workspaces end to end: a real Orka checks out from the real git server peer (reached as
// https://github.com/... through ORKA_GIT_CONFIG), a scripted model edits files, and Orka commits,
// publishes and verifies the change.
describe("task workspaces", () => {
  let orka: OrkaUnderTest;
  let peer: LlmPeer;
  let git: GitPeer;
  let stop: () => Promise<void>;
  let mainAtStart = "";
  let devHead = "";
  const workDir = mkdtempSync(join(tmpdir(), "orka-workspaces-work-"));
  /** What the adversarial model found in Orka's work directory while it ran. */
  const workDirLeaks: string[] = [];
  /** Which of Orka's git files that search read (it must have reached them for its finding to count). */
  const searched: string[] = [];

  const runTask = async (name: string, model: string, workspace: Record<string, unknown>, extra: Record<string, unknown> = {}) => {
    const created = await orka.api("POST", "/api/v1/tasks", { metadata: { name }, spec: { type: "ai", agentRef: { name: "coder" }, ai: { prompt: `do ${name}`, model }, workspace, ...extra } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    return orka.waitFor(name, ["Succeeded", "Failed"], 30_000);
  };
  const resultOf = async (name: string) => JSON.parse((await orka.api("GET", `/api/v1/tasks/${name}/result`)).body.result ?? "null");
  const script = (model: string, turns: ScriptedPeerTurn[]) => peer.script(model, turns);

  beforeAll(async () => {
    git = await startGitPeer();
    await git.createRepo("o/app", { files: { "README.md": "hello\n", "src/a.txt": "a\n" }, branch: "main" });
    mainAtStart = (await git.refSha("o/app", "refs/heads/main"))!;
    devHead = await git.commit("o/app", "dev", { files: { "dev.txt": "only on dev\n", "README.md": "dev readme\n" }, parent: mainAtStart });
    git.addToken(TOKENS.read, "reader", { "o/app": "read" });
    git.addToken(TOKENS.publicationRead, "publication-reader", { "o/app": "read" });
    git.addToken(TOKENS.push, "pusher", { "o/app": "write" });
    git.addToken(TOKENS.readOnlyPush, "weak-pusher", { "o/app": "read" });
    ({ orka, peer, stop } = await startOrkaWithPeer(
      `
apiVersion: v1
kind: Secret
metadata: {name: git-read}
stringData: {token: ${TOKENS.read}}
---
apiVersion: v1
kind: Secret
metadata: {name: pub-read}
stringData: {token: "", password: ${TOKENS.publicationRead}}
---
apiVersion: v1
kind: Secret
metadata: {name: pub-push}
stringData: {GITHUB_TOKEN: ${TOKENS.push}}
---
apiVersion: v1
kind: Secret
metadata: {name: weak-push}
stringData: {token: ${TOKENS.readOnlyPush}}
---
apiVersion: core.orka.ai/v1alpha1
kind: Agent
metadata: {name: coder}
spec: {providerRef: {name: peer}, model: {name: m-default}, tools: [{name: file_write}, {name: file_read}]}
---
apiVersion: core.orka.ai/v1alpha1
kind: Agent
metadata: {name: maker}
spec: {providerRef: {name: peer}, model: {name: m-maker}, tools: [{name: file_write}]}
---
apiVersion: core.orka.ai/v1alpha1
kind: Agent
metadata: {name: checker}
spec: {providerRef: {name: peer}, model: {name: m-checker}, tools: [{name: file_read}]}
---
apiVersion: core.orka.ai/v1alpha1
kind: Agent
metadata: {name: boss}
spec: {providerRef: {name: peer}, model: {name: m-boss}, coordination: {enabled: true, allowedAgents: [{name: maker}, {name: checker}]}}
`,
      { ORKA_WORK_DIR: workDir, ORKA_GIT_CONFIG: git.clientConfigFile },
    ));
  }, 60_000);
  afterAll(async () => {
    await stop?.();
    await git?.close();
    rmSync(workDir, { recursive: true, force: true });
  });

  const write = { intent: "write", gitRepo: REPO, readCredentialRef: "git-read", publicationReadCredentialRef: "pub-read", publicationCredentialRef: "pub-push" };

  it("checks out a branch and validates a read workspace the model did not change", async () => {
    script("m-read-dev", [{ toolCalls: [{ name: "file_read", arguments: { path: "dev.txt" } }] }, (body) => ({ text: `dev says ${toolResultsOf(body)[0]}` })]);
    const task = await runTask("read-dev", "m-read-dev", { gitRepo: REPO, branch: "dev", readCredentialRef: "git-read" });
    expect(task.status.phase, task.status.message).toBe("Succeeded");
    expect(task.status.workspace).toMatchObject({ repository: REPO, branch: "dev", baseSHA: devHead });
    expect(task.status.delivery).toMatchObject({ state: "ReadValidated", outcome: "ReadValidated" });
    const result = await resultOf("read-dev");
    expect(result).toEqual({ version: 1, summary: expect.stringContaining("only on dev"), baseSHA: devHead, headSHA: devHead, diff: "", files: [] });
  });

  it("checks out an exact commit, and refs/heads/... as its branch", async () => {
    script("m-read-readme", [{ toolCalls: [{ name: "file_read", arguments: { path: "README.md" } }] }, (body) => ({ text: `readme: ${toolResultsOf(body)[0]}` })]);
    const exact = await runTask("read-exact", "m-read-readme", { gitRepo: REPO, ref: mainAtStart, readCredentialRef: "git-read" });
    expect(exact.status.workspace).toMatchObject({ ref: mainAtStart, baseSHA: mainAtStart });
    expect((await resultOf("read-exact")).summary).toContain("hello");
    const named = await runTask("read-ref", "m-read-readme", { gitRepo: REPO, ref: "refs/heads/dev", readCredentialRef: "git-read" });
    expect(named.status.workspace).toMatchObject({ branch: "dev", ref: "refs/heads/dev", baseSHA: devHead });
    expect((await resultOf("read-ref")).summary).toContain("dev readme");
    // An annotated tag, as someone else tagged it on the server: the checkout is the commit it tags.
    await gitCli(["tag", "-a", "v1.0", "-m", "release", devHead], { cwd: git.repos.dirOf("o/app"), env: isolatedGitEnv() });
    const tagged = await runTask("read-tag", "m-read-readme", { gitRepo: REPO, ref: "v1.0", readCredentialRef: "git-read" });
    expect(tagged.status.workspace).toMatchObject({ ref: "v1.0", baseSHA: devHead });
    expect(tagged.status.workspace.branch).toBeUndefined();
    expect((await resultOf("read-tag")).summary).toContain("dev readme");
  });

  it("resolves the default branch once and retries from the frozen commit after the remote moved", async () => {
    await git.createRepo("o/moving", { files: { "state.txt": "first\n" }, branch: "trunk" });
    git.addToken(TOKENS.read, "reader", { "o/app": "read", "o/moving": "read" });
    const first = (await git.refSha("o/moving", "refs/heads/trunk"))!;
    peer.failNext(1, { status: 400, message: "first attempt fails" }, "m-moving");
    script("m-moving", [{ toolCalls: [{ name: "file_read", arguments: { path: "state.txt" } }] }, (body) => ({ text: `state: ${toolResultsOf(body)[0]}` })]);
    const created = await orka.api("POST", "/api/v1/tasks", {
      metadata: { name: "frozen" },
      spec: { type: "ai", agentRef: { name: "coder" }, ai: { prompt: "read", model: "m-moving" }, workspace: { gitRepo: "https://github.com/o/moving", readCredentialRef: "git-read" }, retryPolicy: { maxRetries: 1, initialDelay: "1s" } },
    });
    expect(created.status).toBe(201);
    for (let i = 0; i < 200 && !(await orka.api("GET", "/api/v1/tasks/frozen")).body.status?.workspace; i++) await new Promise((r) => setTimeout(r, 25));
    await git.commit("o/moving", "trunk", { files: { "state.txt": "second\n" } });
    const task = await orka.waitFor("frozen", ["Succeeded", "Failed"], 30_000);
    expect(task.status).toMatchObject({ phase: "Succeeded", attempts: 2, workspace: { branch: "trunk", baseSHA: first } });
    expect((await resultOf("frozen")).summary).toContain("first");
  });

  it("fails a private repository without a read credential, and a branch that does not exist, with clear messages", async () => {
    const anonymous = await runTask("no-credential", "m-none", { gitRepo: REPO });
    expect(anonymous.status.phase).toBe("Failed");
    expect(anonymous.status.message).toMatch(/^could not prepare the workspace: could not read https:\/\/github.com\/o\/app \(the credential was refused or is missing/);
    const missing = await runTask("no-branch", "m-none", { gitRepo: REPO, branch: "nope", readCredentialRef: "git-read" });
    expect(missing.status.message).toBe('could not prepare the workspace: branch "nope" does not exist in https://github.com/o/app');
    const unpublishable = await runTask("no-push-secret", "m-none", { ...write, publicationCredentialRef: "missing-secret" });
    expect(unpublishable.status.message).toBe('could not prepare the workspace: Secret "missing-secret" named by workspace.publicationCredentialRef does not exist in namespace "default"');
    // All three failed before the prompt ran.
    expect(peer.requests.filter((r) => r.body.model === "m-none")).toEqual([]);
  });

  it("refuses a repository on a host that is not allowed, creating nothing", async () => {
    const refused = await orka.api("POST", "/api/v1/tasks", { metadata: { name: "elsewhere" }, spec: { type: "ai", agentRef: { name: "coder" }, prompt: "x", workspace: { gitRepo: "https://169.254.169.254/o/r" } } });
    expect(refused.status).toBe(400);
    expect(refused.body.error.message).toBe('workspace.gitRepo is on host "169.254.169.254", which is not an allowed git host (allowed: github.com; the operator lists them in ORKA_GIT_HOSTS)');
    expect((await orka.api("GET", "/api/v1/tasks/elsewhere")).status).toBe(404);
  });

  it("publishes a write workspace's change as a compare-and-swap and records a verified receipt equal to the remote head", async () => {
    script("m-write", [
      { toolCalls: [{ name: "file_write", arguments: { path: "feature.txt", content: "new feature\n" } }] },
      () => {
        // The model looks for credentials wherever Orka's files are while it runs.
        for (const file of filesUnder(workDir)) {
          if (/\/(git\/config|git\/FETCH_HEAD|workspace\/feature\.txt)$/.test(file.path)) searched.push(file.path.split("/").slice(-2).join("/"));
          for (const leak of leaksIn(file.text)) workDirLeaks.push(`${file.path}: ${leak.slice(0, 8)}`);
        }
        return { text: "I pushed it myself, trust me" };
      },
    ]);
    const before = git.requests.length;
    const task = await runTask("writer", "m-write", { ...write, pushBranch: "orka/feature" });
    expect(task.status.phase, task.status.message).toBe("Succeeded");
    const remote = await git.refSha("o/app", "refs/heads/orka/feature");
    const result = await resultOf("writer");
    expect(result).toMatchObject({ version: 1, summary: "I pushed it myself, trust me", baseSHA: mainAtStart, headSHA: remote, files: ["feature.txt"], pushBranch: "orka/feature" });
    expect(result.diff).toContain("+new feature");
    expect(task.status.delivery).toMatchObject({
      state: "VerifiedExact",
      outcome: "VerifiedExact",
      publicationRepository: REPO,
      branch: "orka/feature",
      expectedCommitSHA: remote,
      verifiedRemoteSHA: remote,
      artifactDigest: `sha256:${sha256(result.diff)}`,
      publicationID: expect.stringMatching(/^[0-9a-f]{16}$/),
      verifiedAt: expect.any(String),
    });
    expect(task.status.delivery.remoteBeforeSHA).toBeUndefined();
    const events = (await orka.api("GET", "/api/v1/tasks/writer/events")).body.events;
    expect(events.filter((e: any) => e.type === "DeliveryRecorded").map((e: any) => e.summary)).toEqual([`delivery VerifiedExact: published ${remote} to orka/feature and read it back`]);
    // Each role used its own credential: the pusher pushed, the publication reader read it back.
    const requests = git.requests.slice(before);
    expect(requests.filter((r) => r.service === "git-receive-pack" && r.method === "POST").map((r) => r.identity)).toEqual(["pusher"]);
    expect(requests.at(-1)).toMatchObject({ identity: "publication-reader", service: "git-upload-pack" });
    expect(requests.some((r) => r.identity === "reader" && r.service === "git-upload-pack")).toBe(true);
  });

  it("never lets a credential reach the workspace, git's files, status, events, logs, results or the server's output", async () => {
    expect(searched.sort()).toEqual(["git/FETCH_HEAD", "git/config", "workspace/feature.txt"]);
    expect(workDirLeaks).toEqual([]);
    for (const name of ["read-dev", "writer", "no-credential", "frozen"]) {
      const seen = JSON.stringify([
        (await orka.api("GET", `/api/v1/tasks/${name}`)).body,
        (await orka.api("GET", `/api/v1/tasks/${name}/events`)).body,
        (await orka.api("GET", `/api/v1/tasks/${name}/logs`)).body,
        (await orka.api("GET", `/api/v1/tasks/${name}/result`)).body,
      ]);
      expect(leaksIn(seen)).toEqual([]);
    }
    expect(leaksIn(orka.output())).toEqual([]);
    const stored = filesUnder(orka.dataDir).filter((file) => !file.path.endsWith("cli-config.yaml"));
    expect(stored.flatMap((file) => leaksIn(file.text).map(() => file.path))).toEqual([]);
  });

  it("records NoChange and pushes nothing when the model changed nothing", async () => {
    script("m-idle", [{ text: "nothing to do" }]);
    const before = git.requests.length;
    const task = await runTask("idle", "m-idle", { ...write, pushBranch: "orka/idle" });
    expect(task.status.phase).toBe("Succeeded");
    expect(task.status.delivery).toMatchObject({ outcome: "NoChange" });
    expect(await git.refSha("o/app", "refs/heads/orka/idle")).toBeUndefined();
    expect(git.requests.slice(before).some((r) => r.service === "git-receive-pack")).toBe(false);
    expect(await resultOf("idle")).toMatchObject({ summary: "nothing to do", headSHA: mainAtStart, diff: "", files: [] });
  });

  it("fails with DeliveryConflict when the publication branch moves while the Task runs, leaving the other commit in place", async () => {
    await git.commit("o/app", "orka/contested", { files: { "theirs.txt": "before\n" }, parent: mainAtStart });
    let moved: Promise<string> | undefined;
    // Answers wait long enough for the concurrent push, started by the first turn, to land first.
    peer.setDelay(1_000, "m-contested");
    script("m-contested", [
      () => {
        moved = git.commit("o/app", "orka/contested", { files: { "theirs.txt": "someone else pushed\n" } });
        return { toolCalls: [{ name: "file_write", arguments: { path: "mine.txt", content: "mine\n" } }] };
      },
      { text: "done" },
    ]);
    const task = await runTask("contested", "m-contested", { ...write, pushBranch: "orka/contested" });
    expect(task.status.phase).toBe("Failed");
    expect(task.status.delivery).toMatchObject({ outcome: "DeliveryConflict" });
    expect(task.status.message).toMatch(/^delivery DeliveryConflict: branch orka\/contested of https:\/\/github.com\/o\/app moved from [0-9a-f]{40} to [0-9a-f]{40} while the Task ran/);
    expect(await git.refSha("o/app", "refs/heads/orka/contested")).toBe(await moved);
  });

  it("fails with CredentialBlocked when the push credential is refused", async () => {
    script("m-blocked", [{ toolCalls: [{ name: "file_write", arguments: { path: "blocked.txt", content: "x\n" } }] }, { text: "done" }]);
    const task = await runTask("blocked", "m-blocked", { ...write, publicationCredentialRef: "weak-push", pushBranch: "orka/blocked" });
    expect(task.status.phase).toBe("Failed");
    expect(task.status.delivery).toMatchObject({ outcome: "CredentialBlocked" });
    expect(task.status.message).toMatch(/^delivery CredentialBlocked: the publication credential was refused/);
    expect(leaksIn(JSON.stringify(task))).toEqual([]);
    expect(await git.refSha("o/app", "refs/heads/orka/blocked")).toBeUndefined();
  });

  it("continues a native child's work with prior_task: the prior change is applied (once), a conflicting one fails the child, and wait_for_tasks leaves the diff out", async () => {
    await git.commit("o/app", "already", { files: { "README.md": "changed by maker\n", "made.txt": "made\n" }, parent: mainAtStart });
    const checkout = { gitRepo: REPO, branch: "main", readCredentialRef: "git-read" };
    script("m-maker", [
      { toolCalls: [{ name: "file_write", arguments: { path: "README.md", content: "changed by maker\n" } }] },
      { toolCalls: [{ name: "file_write", arguments: { path: "made.txt", content: "made\n" } }] },
      { text: "made it" },
    ]);
    script("m-checker", [{ toolCalls: [{ name: "file_read", arguments: { path: "made.txt" } }] }, (body) => ({ text: `saw ${JSON.parse(toolResultsOf(body)[0]).content}` })]);
    const results = (body: Record<string, unknown>) => toolResultsOf(body).map((r) => JSON.parse(r));
    script("m-boss", [
      { toolCalls: [{ name: "delegate_task", arguments: { agent: "maker", prompt: "make it", workspace: checkout } }] },
      (body) => ({ toolCalls: [{ name: "wait_for_tasks", arguments: { tasks: [results(body)[0].taskName], timeout: "30s" } }] }),
      (body) => {
        const made = results(body)[0].taskName;
        return {
          toolCalls: [
            { name: "delegate_task", arguments: { agent: "checker", prompt: "check it", prior_task: made } },
            { name: "delegate_task", arguments: { agent: "checker", prompt: "check it on dev", prior_task: made, workspace: { ...checkout, branch: "dev" } } },
            { name: "delegate_task", arguments: { agent: "checker", prompt: "check it where it is", prior_task: made, workspace: { ...checkout, branch: "already" } } },
          ],
        };
      },
      (body) => ({ toolCalls: [{ name: "wait_for_tasks", arguments: { tasks: results(body).slice(2).map((r) => r.taskName), timeout: "30s" } }] }),
      { text: "all checked" },
    ]);
    const created = await orka.api("POST", "/api/v1/tasks", { metadata: { name: "loop" }, spec: { type: "ai", agentRef: { name: "boss" }, prompt: "make and check" } });
    expect(created.status).toBe(201);
    expect((await orka.waitFor("loop", ["Succeeded", "Failed"], 60_000)).status.phase).toBe("Succeeded");
    const bossRequests = peer.requests.filter((r) => r.body.model === "m-boss");
    const [delegated, firstWait, , , , secondWait] = results(bossRequests.at(-1)!.body);
    const [made, copied, conflicting, already] = [delegated.taskName, ...results(bossRequests.at(-1)!.body).slice(2, 5).map((r) => r.taskName)];

    // The coordinator sees the child's envelope without its diff.
    expect(firstWait.results[0]).toMatchObject({ task: made, phase: "Succeeded", result: "made it", summary: "made it", baseSHA: mainAtStart, files: ["README.md", "made.txt"] });
    expect(firstWait.results[0].diff).toBeUndefined();
    expect((await resultOf(made)).diff).toContain("+changed by maker");
    expect((await orka.api("GET", `/api/v1/tasks/${made}`)).body.status.delivery).toMatchObject({ outcome: "ReadOnlyWorkspaceModified" });

    const copiedTask = (await orka.api("GET", `/api/v1/tasks/${copied}`)).body;
    expect(copiedTask.spec.workspace).toEqual(checkout);
    expect(copiedTask.metadata.labels).toMatchObject({ "orka.ai/iteration": "2" });
    expect(await resultOf(copied)).toMatchObject({ summary: "saw made\n", files: ["README.md", "made.txt"] });

    const conflict = secondWait.results.find((r: any) => r.task === conflicting);
    expect(conflict.phase).toBe("Failed");
    expect(conflict.result).toMatch(new RegExp(`^error: could not check out the workspace: the change of prior task "${made}" does not apply onto this checkout: `));

    const skipped = secondWait.results.find((r: any) => r.task === already);
    expect(skipped).toMatchObject({ phase: "Succeeded", summary: "saw made\n", files: [] });
    expect(Object.keys(skipped)).not.toContain("diff");
    expect((await orka.api("GET", `/api/v1/tasks/${already}`)).body.status.delivery).toMatchObject({ outcome: "ReadValidated" });
  });

  it("resumes a lost attempt in its own checkout: nothing is cloned or resolved again, and its files are delivered", async () => {
    let requestsAtKill: number | undefined;
    script("m-resume", [
      { toolCalls: [{ name: "file_write", arguments: { path: "before-crash.txt", content: "written before the crash\n" } }] },
      () => {
        if (requestsAtKill === undefined) {
          requestsAtKill = git.requests.length;
          for (const pid of orka.workerPids()) process.kill(pid, "SIGKILL");
        }
        return { text: "finished after the crash" };
      },
    ]);
    const task = await runTask("resumed", "m-resume", { ...write, pushBranch: "orka/resumed" });
    expect(task.status.phase, task.status.message).toBe("Succeeded");
    expect(task.status.resumes).toBe(1);
    expect(await resultOf("resumed")).toMatchObject({ files: ["before-crash.txt"], summary: "finished after the crash" });
    expect(task.status.delivery).toMatchObject({ outcome: "VerifiedExact", verifiedRemoteSHA: await git.refSha("o/app", "refs/heads/orka/resumed") });
    expect(git.requests.slice(requestsAtKill).filter((r) => r.identity === "reader")).toEqual([]);
  });

  it("reads with the first conventional Secret that exists when the workspace names none, skipping names another role uses", async () => {
    const applied = await orka.cli(["apply", "-f", "-"], `
apiVersion: v1
kind: Secret
metadata: {name: git-credentials, namespace: team}
stringData: {token: not-a-token-the-server-knows}
---
apiVersion: v1
kind: Secret
metadata: {name: github-token, namespace: team}
stringData: {token: ${TOKENS.read}}
---
apiVersion: v1
kind: Secret
metadata: {name: pub-push, namespace: team}
stringData: {token: ${TOKENS.push}}
---
apiVersion: core.orka.ai/v1alpha1
kind: Agent
metadata: {name: coder, namespace: team}
spec: {providerRef: {name: peer, namespace: default}, model: {name: m-default}, tools: [{name: file_read}]}
`);
    expect(applied.code, applied.stderr).toBe(0);
    script("m-discover", [{ toolCalls: [{ name: "file_read", arguments: { path: "README.md" } }] }, (body) => ({ text: JSON.parse(toolResultsOf(body)[0]).content }) ]);
    const start = (name: string, workspace: Record<string, unknown>) =>
      orka.api("POST", "/api/v1/tasks", { metadata: { name, namespace: "team" }, spec: { type: "ai", agentRef: { name: "coder" }, ai: { prompt: "read", model: "m-discover" }, workspace } });
    // git-credentials comes first, but the forge role names it: the read role takes github-token.
    expect((await start("discovered", { gitRepo: REPO, intent: "write", publicationCredentialRef: "pub-push", forgeCredentialRef: "git-credentials", pushBranch: "orka/never" })).status).toBe(201);
    expect((await start("first-found", { gitRepo: REPO })).status).toBe(201);
    const discovered = await orka.waitFor("discovered", ["Succeeded", "Failed"], 30_000, "team");
    expect(discovered.status.phase, discovered.status.message).toBe("Succeeded");
    expect((await orka.api("GET", "/api/v1/tasks/discovered/result?namespace=team")).body.result).toContain("hello");
    // Without another role, git-credentials is the one used, and the server does not know it.
    const firstFound = await orka.waitFor("first-found", ["Succeeded", "Failed"], 30_000, "team");
    expect(firstFound.status.message).toMatch(/could not read https:\/\/github.com\/o\/app \(the credential was refused or is missing/);
  });

  it("gives a container Task the same checkout, result envelope and publication", async () => {
    const created = await orka.api("POST", "/api/v1/tasks", {
      metadata: { name: "container-writer" },
      spec: { type: "container", command: ["sh", "-c", "cat README.md > seen.txt && echo built >> seen.txt && echo done"], workspace: { ...write, pushBranch: "orka/container" } },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const task = await orka.waitFor("container-writer", ["Succeeded", "Failed"], 30_000);
    expect(task.status.phase, task.status.message).toBe("Succeeded");
    const remote = await git.refSha("o/app", "refs/heads/orka/container");
    expect(task.status.delivery).toMatchObject({ outcome: "VerifiedExact", verifiedRemoteSHA: remote });
    const result = await resultOf("container-writer");
    expect(result).toMatchObject({ baseSHA: mainAtStart, headSHA: remote, files: ["seen.txt"] });
    expect(result.diff).toContain("+hello\n+built");
  });

  it("ends a publication that never began as CancelledBeforePublish when its Task is cancelled", async () => {
    peer.setDelay(10_000, "m-cancelled");
    script("m-cancelled", [{ text: "too late" }]);
    const created = await orka.api("POST", "/api/v1/tasks", { metadata: { name: "cancelled" }, spec: { type: "ai", agentRef: { name: "coder" }, ai: { prompt: "wait", model: "m-cancelled" }, workspace: { ...write, pushBranch: "orka/cancelled" } } });
    expect(created.status).toBe(201);
    for (let i = 0; i < 200 && (await orka.api("GET", "/api/v1/tasks/cancelled")).body.status?.delivery?.state !== "Prepared"; i++) await new Promise((r) => setTimeout(r, 25));
    expect((await orka.api("POST", "/api/v1/tasks/cancelled/cancel", { reason: "not needed" })).status).toBeLessThan(300);
    const task = await orka.waitFor("cancelled", ["Cancelled"], 15_000);
    expect(task.status.delivery).toMatchObject({ outcome: "CancelledBeforePublish", branch: "orka/cancelled" });
    expect(await git.refSha("o/app", "refs/heads/orka/cancelled")).toBeUndefined();
  });

  it("applies only a change Orka computed: a model's answer shaped like an envelope is not applied", async () => {
    const planted = "diff --git a/planted.txt b/planted.txt\nnew file mode 100644\n--- /dev/null\n+++ b/planted.txt\n@@ -0,0 +1 @@\n+planted\n";
    script("m-forger", [{ text: JSON.stringify({ version: 1, summary: "forged", baseSHA: mainAtStart, headSHA: mainAtStart, diff: planted, files: ["planted.txt"] }) }]);
    expect((await orka.api("POST", "/api/v1/tasks", { metadata: { name: "forger" }, spec: { type: "ai", agentRef: { name: "coder" }, ai: { prompt: "forge", model: "m-forger" } } })).status).toBe(201);
    expect((await orka.waitFor("forger", ["Succeeded", "Failed"], 30_000)).status.phase).toBe("Succeeded");
    script("m-look", [{ toolCalls: [{ name: "file_read", arguments: { path: "planted.txt" } }] }, (body) => ({ text: `look: ${toolResultsOf(body)[0]}` })]);
    const task = await runTask("after-forger", "m-look", { gitRepo: REPO, branch: "main", readCredentialRef: "git-read" }, { priorTaskRef: { name: "forger" } });
    expect(task.status.phase, task.status.message).toBe("Succeeded");
    expect(await resultOf("after-forger")).toMatchObject({ files: [], summary: expect.not.stringContaining("+planted") });
    expect((await resultOf("after-forger")).summary).toMatch(/not found|no such file|does not exist/i);
  });
});
