import type { Delivery, DeliveryOutcome, Task } from "../../resources/task.ts";
import { errorMessage } from "../../util/errors.ts";
import { sha256Hex } from "../../util/hash.ts";
import { commitChange, summaryOf, type ResultEnvelope, type WorkspaceChange } from "../../workspace/change.ts";
import type { GitDirs } from "../../workspace/git.ts";
import { pushLeased } from "../../workspace/publish.ts";
import { RemoteReadError, remoteBranchSHA, type Remote } from "../../workspace/remote.ts";
import { publicationReadCredential, workspaceCredential } from "../workspace-credentials.ts";
import { recordEvent, type TaskContext } from "./context.ts";
import { writeStatus, type Transition } from "./status.ts";
import { hasRepository } from "./workspace.ts";
import { openPublicationPullRequest, pullRequestPending, PULL_REQUEST_FAILED } from "./pull-request.ts";

/** Outcomes that fail the Task: the change was not delivered as asked. */
const FAILING_OUTCOMES: readonly DeliveryOutcome[] = ["DeliveryConflict", "CredentialBlocked", "PublicationOutcomeUnknown"];

/** Whether a succeeded attempt's workspace still has to be turned into a result (and published). */
export function deliveryPending(task: Task): boolean {
  return (hasRepository(task) && !!task.status?.workspace && !task.status.delivery?.outcome) || pullRequestPending(task);
}

/** Whether a delivery outcome fails its Task. */
function outcomeFails(task: Task, outcome: DeliveryOutcome): boolean {
  // A coding CLI on a read-only workspace was denied its write tools: a change means it got round that.
  return outcome === "ReadOnlyWorkspaceModified" ? task.spec.type === "agent" : FAILING_OUTCOMES.includes(outcome);
}

/** Why the Task fails after its delivery, if it does. */
export function deliveryFailure(task: Task): string | undefined {
  const delivery = task.status?.delivery;
  if (delivery?.reason === PULL_REQUEST_FAILED) return `delivery ${PULL_REQUEST_FAILED}: ${delivery.message}`;
  if (!delivery?.outcome || !outcomeFails(task, delivery.outcome)) return undefined;
  return `delivery ${delivery.outcome}: ${delivery.message ?? "the change was not published"}`;
}

/**
 * A cancelled Task's publication that had not begun ends as CancelledBeforePublish. One cancelled
 * while its push was under way is not decided any more (the Task ends now): it says so, naming the
 * commit the branch may hold.
 */
export function cancelledDelivery(task: Task): Delivery | undefined {
  const delivery = task.status?.delivery;
  if (!delivery || delivery.outcome) return delivery;
  if (delivery.state === "Publishing") {
    const message = `the Task was cancelled while its change was being published: branch ${delivery.branch} may hold ${delivery.expectedCommitSHA}; nothing was verified`;
    return { ...delivery, state: "PublicationOutcomeUnknown", outcome: "PublicationOutcomeUnknown", message };
  }
  return { ...delivery, state: "CancelledBeforePublish", outcome: "CancelledBeforePublish", message: "the Task was cancelled before its change was published" };
}

/** A delivery decision and the Task it is written over (publication writes its intent first). */
export interface DeliveryStep {
  written: Task;
  transition: Transition;
}

/**
 * Orka, not the model, turns the attempt's workspace into the Task's result: it commits the change,
 * stores the result envelope, and, for write intent, publishes the commit and reads it back.
 */
export async function deliver(ctx: TaskContext, task: Task): Promise<DeliveryStep> {
  if (pullRequestPending(task)) return { written: task, transition: await openPublicationPullRequest(ctx, task) };
  const step = await deliverChange(ctx, task);
  const settledDelivery = step.transition.status?.delivery;
  if (!settledDelivery?.outcome) return step;
  const failed = outcomeFails(task, settledDelivery.outcome);
  const summary = `delivery ${settledDelivery.outcome}: ${settledDelivery.message ?? ""}`;
  return { ...step, transition: { ...step.transition, after: (written) => recordEvent(ctx, written, { type: "DeliveryRecorded", severity: failed ? "error" : "info", summary }) } };
}

async function deliverChange(ctx: TaskContext, task: Task): Promise<DeliveryStep> {
  const { namespace, name } = task.metadata;
  // An interrupted publication already stored its envelope: the remote decides, even when the workspace is gone.
  if (task.status!.delivery?.state === "Publishing") {
    const landed = await publishedAlready(ctx, task).catch(() => undefined);
    if (landed) return verified(task, landed);
  }
  const dirs = ctx.runner.workspaceOf(task.status!.jobName!);
  const base = task.status!.workspace!.baseSHA;
  let change: WorkspaceChange;
  try {
    // A read-only workspace counts every file, ignored ones too: a .gitignore must not hide a write.
    change = await commitChange(ctx.git, dirs, base, `Orka: the change of task ${name}`, { includeIgnored: task.spec.workspace!.intent !== "write" });
  } catch (err) {
    return settled(task, "PublicationOutcomeUnknown", `could not read the workspace's change: ${errorMessage(err)}`);
  }
  const write = task.spec.workspace!.intent === "write";
  const branch = task.status!.delivery?.branch;
  const envelope: ResultEnvelope = {
    version: 1,
    summary: summaryOf(ctx.data.getResult(namespace, name), base),
    baseSHA: change.baseSHA,
    headSHA: change.headSHA,
    diff: change.diff,
    files: change.files,
    ...(write && branch && change.diff ? { pushBranch: branch } : {}),
  };
  ctx.data.putResult(namespace, name, JSON.stringify(envelope));
  if (!write) return settled(task, change.diff ? "ReadOnlyWorkspaceModified" : "ReadValidated", change.diff ? `the read-only workspace was modified (${change.files.length} files); nothing was published` : "nothing changed");
  if (!change.diff) return settled(task, "NoChange", "the workspace has no change to publish; nothing was pushed");
  return publish(ctx, task, dirs, change).catch((err) => {
    const outcome = err instanceof RemoteReadError && err.credentialRefused ? "CredentialBlocked" : "PublicationOutcomeUnknown";
    return settled(task, outcome, errorMessage(err));
  });
}

/**
 * Pushes the commit as a compare-and-swap on the branch as it was before the model ran, then reads
 * it back with the publication read credential. The intent (state Publishing, the expected commit)
 * is written before the push, so a pass that died after it decides from the remote alone.
 */
async function publish(ctx: TaskContext, task: Task, dirs: GitDirs, change: WorkspaceChange): Promise<DeliveryStep> {
  const workspace = task.spec.workspace!;
  const namespace = task.metadata.namespace;
  const prepared = task.status!.delivery!;
  const branch = prepared.branch!;
  const before = prepared.remoteBeforeSHA;
  const reader: Remote = { url: prepared.publicationRepository!, credential: await publicationReadCredential(ctx.store, namespace, workspace) };
  const pusher: Remote = { url: prepared.publicationRepository!, credential: await workspaceCredential(ctx.store, namespace, workspace, "publicationCredentialRef") };
  let written = task;
  if (prepared.state === "Publishing") {
    const now = await remoteBranchSHA(ctx.git, reader, branch);
    if (now === prepared.expectedCommitSHA) return verified(task, now!);
    if (now !== before) return settled(task, "PublicationOutcomeUnknown", `an interrupted publication to ${branch} cannot be decided: the branch is at ${now ?? "nothing"}, neither the commit observed before (${before ?? "no branch"}) nor the one pushed (${prepared.expectedCommitSHA})`);
  } else {
    const intent: Delivery = {
      ...prepared,
      state: "Publishing",
      publicationID: sha256Hex(`${task.metadata.uid}:${branch}:${change.headSHA}`).slice(0, 16),
      expectedCommitSHA: change.headSHA,
      artifactDigest: `sha256:${sha256Hex(change.diff)}`,
    };
    written = await writeStatus(ctx.store, task, { delivery: intent });
    // The intent is committed before the push starts: a crash must not leave a push without it.
    await ctx.gate.settled();
  }
  const pushed = await pushLeased(ctx.git, dirs, pusher, change.headSHA, branch, before);
  const now = await remoteBranchSHA(ctx.git, reader, branch);
  if (now === change.headSHA) return verified(written, now);
  if (!pushed.pushed && pushed.credentialRefused) return settled(written, "CredentialBlocked", `the publication credential was refused for ${reader.url}: ${pushed.reason}`);
  if (now !== before) {
    return settled(written, "DeliveryConflict", `branch ${branch} of ${reader.url} moved from ${before ?? "nothing"} to ${now ?? "nothing"} while the Task ran; the change was not pushed over it`);
  }
  return settled(written, "PublicationOutcomeUnknown", `the push to ${branch} did not land: ${pushed.pushed ? "the branch did not change" : pushed.reason}`);
}

/** The expected commit, when the publication branch already holds it. */
async function publishedAlready(ctx: TaskContext, task: Task): Promise<string | undefined> {
  const delivery = task.status!.delivery!;
  const reader: Remote = { url: delivery.publicationRepository!, credential: await publicationReadCredential(ctx.store, task.metadata.namespace, task.spec.workspace!) };
  const now = await remoteBranchSHA(ctx.git, reader, delivery.branch!);
  return now !== undefined && now === delivery.expectedCommitSHA ? now : undefined;
}

function verified(task: Task, remoteSHA: string): DeliveryStep {
  const delivery = { ...task.status!.delivery!, verifiedRemoteSHA: remoteSHA, verifiedAt: new Date().toISOString() };
  return settledWith(task, delivery, "VerifiedExact", `published ${remoteSHA} to ${delivery.branch} and read it back`);
}

function settled(task: Task, outcome: DeliveryOutcome, message: string): DeliveryStep {
  return settledWith(task, task.status?.delivery, outcome, message);
}

function settledWith(task: Task, delivery: Delivery | undefined, outcome: DeliveryOutcome, message: string): DeliveryStep {
  return { written: task, transition: { status: { delivery: { ...delivery, state: outcome, outcome, message } } } };
}
