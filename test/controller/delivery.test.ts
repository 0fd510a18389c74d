import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { TaskContext } from "../../src/controller/task/context.ts";
import { cancelledDelivery, deliver } from "../../src/controller/task/delivery.ts";
import { commit } from "../../src/controller/task/status.ts";
import { API_VERSION } from "../../src/resources/meta.ts";
import type { Delivery, Task, TaskSpec, TaskStatus } from "../../src/resources/task.ts";
import { commitChange } from "../../src/workspace/change.ts";
import { checkOut } from "../../src/workspace/checkout.ts";
import { DEFAULT_GIT_SETTINGS, type GitDirs, type GitSettings } from "../../src/workspace/git.ts";
import { pushLeased } from "../../src/workspace/publish.ts";
import { startGitPeer, type GitPeer } from "../peers/git-server.ts";
import { HeldGate } from "../helpers/held-gate.ts";
import { tempStore } from "../helpers/store.ts";

const REPO = "https://github.com/o/crash";
const PUSH = "ghp_crashPUSHER000000000000000000000001";
const READ = "ghp_crashREADER000000000000000000000002";

// A publication whose intent was recorded (state Publishing, the expected commit) and whose pass
// then died: the next pass decides from the remote alone, never pushing twice or over someone else.
describe("delivery after an interrupted publication", () => {
  let git: GitPeer;
  let store: ReturnType<typeof tempStore>;
  let settings: GitSettings;
  let base = "";
  let n = 0;

  beforeAll(async () => {
    git = await startGitPeer();
    await git.createRepo("o/crash", { files: { "README.md": "hello\n" }, branch: "main" });
    base = (await git.refSha("o/crash", "refs/heads/main"))!;
    git.addToken(PUSH, "pusher", { "o/crash": "write" });
    git.addToken(READ, "publication-reader", { "o/crash": "read" });
    settings = { ...DEFAULT_GIT_SETTINGS, configFile: git.clientConfigFile, timeoutMs: 20_000 };
    store = tempStore();
    for (const [name, token] of [["pub-push", PUSH], ["pub-read", READ]]) {
      await store.resources.create({ apiVersion: "v1", kind: "Secret", metadata: { name, namespace: "default" }, spec: { type: "Opaque", data: { token } } });
    }
  });
  afterAll(async () => {
    store?.close();
    await git?.close();
  });
  beforeEach(() => void n++);

  /** A Task whose attempt changed a file and whose publication intent was recorded, and the commit it expected. */
  async function interrupted(): Promise<{ task: Task; ctx: TaskContext; dirs: GitDirs; expected: string }> {
    const name = `crash-${n}`;
    const root = join(store.dir, name);
    const dirs = { workTree: join(root, "workspace"), gitDir: join(root, "git") };
    mkdirSync(dirs.workTree, { recursive: true });
    await checkOut(settings, dirs, { remote: { url: REPO, credential: READ }, baseSHA: base, branch: "main" });
    writeFileSync(join(dirs.workTree, `${name}.txt`), "work\n");
    const expected = (await commitChange(settings, dirs, base, "the change")).headSHA;
    const delivery: Delivery = { state: "Publishing", publicationRepository: REPO, branch: `orka/${name}`, expectedCommitSHA: expected, publicationID: "p", artifactDigest: "sha256:x" };
    const task = await store.resources.create<TaskSpec, TaskStatus>({
      apiVersion: API_VERSION,
      kind: "Task",
      metadata: { name, namespace: "default" },
      spec: { type: "ai", priority: 500, prompt: "go", workspace: { intent: "write", gitRepo: REPO, publicationReadCredentialRef: "pub-read", publicationCredentialRef: "pub-push" } },
    });
    const running = await store.resources.updateStatus({ ...task, status: { phase: "Running" as const, jobName: name, workspace: { repository: REPO, branch: "main", baseSHA: base }, delivery } });
    const ctx = { store: store.resources, data: store.data, git: settings, runner: { workspaceOf: () => dirs } } as unknown as TaskContext;
    return { task: running, ctx, dirs, expected };
  }

  const deliverAndWrite = async (ctx: TaskContext, task: Task) => {
    const step = await deliver(ctx, task);
    await commit(ctx.store, step.written, step.transition);
    return (await store.resources.get<TaskSpec, TaskStatus>("Task", "default", task.metadata.name))!.status!.delivery!;
  };
  const pushesSince = (from: number) => git.requests.slice(from).filter((r) => r.service === "git-receive-pack" && r.method === "POST").length;

  it("verifies a push that landed before the pass died, without pushing again", async () => {
    const { task, ctx, dirs, expected } = await interrupted();
    expect(await pushLeased(settings, dirs, { url: REPO, credential: PUSH }, expected, task.status!.delivery!.branch!, undefined)).toEqual({ pushed: true });
    const from = git.requests.length;
    const delivery = await deliverAndWrite(ctx, task);
    expect(delivery).toMatchObject({ outcome: "VerifiedExact", expectedCommitSHA: expected, verifiedRemoteSHA: expected });
    expect(pushesSince(from)).toBe(0);
  });

  it("verifies a push that landed from the remote alone when the attempt's workspace is gone (a host reboot cleared it)", async () => {
    const { task, ctx, dirs, expected } = await interrupted();
    await pushLeased(settings, dirs, { url: REPO, credential: PUSH }, expected, task.status!.delivery!.branch!, undefined);
    rmSync(dirs.gitDir, { recursive: true, force: true });
    rmSync(dirs.workTree, { recursive: true, force: true });
    const delivery = await deliverAndWrite(ctx, task);
    expect(delivery).toMatchObject({ outcome: "VerifiedExact", verifiedRemoteSHA: expected });
  });

  it("says a Task cancelled mid-push was not verified, naming the commit the branch may hold", async () => {
    const { task, expected } = await interrupted();
    expect(cancelledDelivery(task)).toMatchObject({ outcome: "PublicationOutcomeUnknown", message: expect.stringContaining(`may hold ${expected}`) });
    const prepared = { ...task, status: { ...task.status, delivery: { state: "Prepared" as const, branch: "b" } } };
    expect(cancelledDelivery(prepared)).toMatchObject({ outcome: "CancelledBeforePublish" });
  });

  it("pushes again when the remote still holds what was observed before", async () => {
    const { task, ctx, expected } = await interrupted();
    const from = git.requests.length;
    const delivery = await deliverAndWrite(ctx, task);
    expect(delivery).toMatchObject({ outcome: "VerifiedExact", verifiedRemoteSHA: expected });
    expect(await git.refSha("o/crash", `refs/heads/${delivery.branch}`)).toBe(expected);
    expect(pushesSince(from)).toBe(1);
  });

  it("pushes only once the intent it wrote is committed", async () => {
    const { task, ctx, expected } = await interrupted();
    const prepared = await store.resources.updateStatus({
      ...task,
      status: { ...task.status, delivery: { state: "Prepared" as const, publicationRepository: REPO, branch: task.status!.delivery!.branch } },
    });
    const gate = new HeldGate();
    gate.close(); // as the group commit holds the turn in which the intent is written
    const from = git.requests.length;
    const delivering = deliverAndWrite({ ...ctx, gate } as TaskContext, prepared);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(pushesSince(from)).toBe(0);
    expect((await store.resources.get<TaskSpec, TaskStatus>("Task", "default", task.metadata.name))!.status!.delivery).toMatchObject({ state: "Publishing", expectedCommitSHA: expected });
    gate.open();
    expect(await delivering).toMatchObject({ outcome: "VerifiedExact", verifiedRemoteSHA: expected });
    expect(pushesSince(from)).toBe(1);
  });

  it("records PublicationOutcomeUnknown, pushing nothing, when the remote holds neither commit", async () => {
    const { task, ctx } = await interrupted();
    const theirs = await git.commit("o/crash", task.status!.delivery!.branch!, { files: { "other.txt": "someone else\n" }, parent: base });
    const from = git.requests.length;
    const delivery = await deliverAndWrite(ctx, task);
    expect(delivery.outcome).toBe("PublicationOutcomeUnknown");
    expect(delivery.message).toContain(`the branch is at ${theirs}`);
    expect(pushesSince(from)).toBe(0);
    expect(await git.refSha("o/crash", `refs/heads/${delivery.branch}`)).toBe(theirs);
  });
});
