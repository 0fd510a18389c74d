import { githubClientFor } from "../../github/client.ts";
import { openVerifiedPullRequest, verifiedPublication } from "../../github/create-pull-request.ts";
import { githubFailure, isTransient } from "../../github/failure.ts";
import { repoOfSetting } from "../../github/repo-url.ts";
import { readCredential } from "../../github/scope.ts";
import type { Delivery, Task } from "../../resources/task.ts";
import { errorMessage, OrkaError } from "../../util/errors.ts";
import { recordEvent, type TaskContext } from "./context.ts";
import type { Transition } from "./status.ts";

/** The delivery reason of a publication whose pull request could not be opened; it fails the Task. */
export const PULL_REQUEST_FAILED = "PullRequestFailed";

/** Whether a verified publication still owes the pull request its workspace asked for (`createPR`). */
export function pullRequestPending(task: Task): boolean {
  const delivery = task.status?.delivery;
  return !!task.spec.workspace?.createPR && delivery?.outcome === "VerifiedExact" && !delivery.prReceipt && delivery.reason !== PULL_REQUEST_FAILED;
}

/**
 * Opens the pull request of a verified publication with the forge credential: the workspace's prTitle
 * and prBody (fixed when the Task was created), else Orka's fallbacks, and a hidden intent marker.
 * GitHub answers a repeat (after a crash between opening and recording) with the pull request already
 * open for the branch, so one publication gets one pull request. A rate limit or an outage is tried
 * again by the work queue; any other refusal is recorded and fails the Task.
 */
export async function openPublicationPullRequest(ctx: TaskContext, task: Task): Promise<Transition> {
  const delivery = task.status!.delivery!;
  try {
    // The verified publication it is opened for is committed first.
    await ctx.gate.settled();
    const receipt = await openPullRequest(ctx, task, delivery);
    const prReceipt = { number: receipt.pr_number, url: receipt.pr_url, state: "open", headSHA: delivery.verifiedRemoteSHA!, status: receipt.status };
    return {
      status: { delivery: { ...delivery, prReceipt } },
      after: (written) => recordEvent(ctx, written, { type: "PullRequestOpened", summary: `pull request #${receipt.pr_number} ${receipt.status === "created" ? "opened" : "found open"}: ${receipt.pr_url}` }),
    };
  } catch (err) {
    if (isTransient(err)) throw githubFailure(err, "the pull request could not be opened yet");
    const message = `the branch was published and verified, but its pull request could not be opened: ${errorMessage(err)}`;
    return {
      status: { delivery: { ...delivery, reason: PULL_REQUEST_FAILED, message } },
      after: (written) => recordEvent(ctx, written, { type: "DeliveryRecorded", severity: "error", summary: `delivery ${PULL_REQUEST_FAILED}: ${message}` }),
    };
  }
}

async function openPullRequest(ctx: TaskContext, task: Task, delivery: Delivery) {
  const workspace = task.spec.workspace!;
  const { namespace, name } = task.metadata;
  const base = repoOfSetting(workspace.gitRepo!);
  if (!base || !ctx.github.webHosts.includes(base.host)) {
    throw new OrkaError("failed_precondition", `${workspace.gitRepo} is not on a GitHub host this server calls (${ctx.github.webHosts.join(", ")})`);
  }
  // The same Secret key as the forge credential of the GitHub tools: the configured one, else `token`.
  const token = await readCredential(ctx.store, namespace, { name: workspace.forgeCredentialRef!, key: workspace.forgeCredentialKey }, "forge credential");
  const client = githubClientFor(ctx.github, token);
  const title = workspace.prTitle?.trim() ? workspace.prTitle : `Orka: the change of task ${name}`;
  const body = workspace.prBody?.trim() ? workspace.prBody : `Published and verified by Orka's workspace publisher for task ${namespace}/${name}.`;
  const text = { headBranch: delivery.branch!, baseBranch: workspace.prBaseBranch!, title, body: `${body}\n\n<!-- orka.publisher.pr-intent.v1 key=${delivery.publicationID} -->` };
  return openVerifiedPullRequest(client, base, verifiedPublication(task, text.headBranch), text);
}
