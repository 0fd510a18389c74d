import type { Delivery, DeliveryOutcome, Task, TaskSpec, TaskStatus, WorkspaceStatus } from "../../resources/task.ts";
import { OrkaError } from "../../util/errors.ts";
import type { CheckoutPlan } from "../../workspace/checkout.ts";
import { diffOf } from "../../workspace/change.ts";
import { checkRepositoryHosts } from "../../workspace/hosts.ts";
import { remoteBranchSHA, resolveRef } from "../../workspace/remote.ts";
import { publicationReadCredential, readCredential, workspaceCredential } from "../workspace-credentials.ts";
import type { TaskContext } from "./context.ts";

/** What an attempt of a Task with a repository starts from, and what its status freezes. */
export interface WorkspacePreparation {
  plan: CheckoutPlan;
  /** The frozen checkout and, for write intent, the publication target as observed before the model ran. */
  status: Pick<TaskStatus, "workspace" | "delivery">;
  /** Credential values the attempt's output must never show. */
  secrets: string[];
}

/** Whether the Task's attempts start from a repository. */
export function hasRepository(task: Task): boolean {
  return !!task.spec.workspace?.gitRepo;
}

/** The publication branch when the workspace names none. */
export function defaultPushBranch(task: Task): string {
  return `orka/${task.metadata.name}`;
}

/**
 * The checkout of the Task's next attempt: the ref resolved once and frozen (retries start from the
 * same commit), the publication target read before the prompt runs, a prior Task's change on top.
 */
export async function prepareWorkspace(ctx: TaskContext, task: Task): Promise<WorkspacePreparation | undefined> {
  if (!hasRepository(task)) return undefined;
  const workspace = task.spec.workspace!;
  const namespace = task.metadata.namespace;
  checkRepositoryHosts(workspace, ctx.git.allowedHosts);
  const remote = { url: workspace.gitRepo!, credential: await readCredential(ctx.store, namespace, workspace) };
  const frozen = task.status?.workspace ?? (await freeze(ctx, task, remote));
  const delivery = task.status?.delivery ?? (workspace.intent === "write" ? await preflight(ctx, task) : undefined);
  return {
    plan: { remote, baseSHA: frozen.baseSHA, branch: frozen.branch, priorChange: await priorChangeOf(ctx, task) },
    status: { workspace: frozen, delivery },
    secrets: remote.credential ? [remote.credential] : [],
  };
}

/**
 * Outcomes recorded only after Orka stored the result envelope it computed. Others (a cancel before
 * publication, a workspace that could not be read) leave the model's own answer as the result.
 */
const ENVELOPE_OUTCOMES: readonly DeliveryOutcome[] = ["VerifiedExact", "NoChange", "ReadValidated", "ReadOnlyWorkspaceModified", "DeliveryConflict", "CredentialBlocked"];

/**
 * The change a prior Task made, when Orka computed it: a result that only looks like an envelope,
 * written by a model, is not applied.
 */
async function priorChangeOf(ctx: TaskContext, task: Task): Promise<CheckoutPlan["priorChange"]> {
  const ref = task.spec.priorTaskRef;
  if (!ref) return undefined;
  const prior = await ctx.store.get<TaskSpec, TaskStatus>("Task", task.metadata.namespace, ref.name);
  const outcome = prior?.status?.delivery?.outcome;
  if (!outcome || !ENVELOPE_OUTCOMES.includes(outcome)) return undefined;
  const diff = diffOf(ctx.data.getResult(task.metadata.namespace, ref.name));
  return diff ? { task: ref.name, diff } : undefined;
}

async function freeze(ctx: TaskContext, task: Task, remote: CheckoutPlan["remote"]): Promise<WorkspaceStatus> {
  const { branch, ref } = task.spec.workspace!;
  const resolved = await resolveRef(ctx.git, remote, { branch, ref });
  return { repository: remote.url, ...resolved, ...(ref ? { ref } : {}), resolvedAt: new Date().toISOString() };
}

/**
 * The publication target before the prompt runs: both credentials must be there, and the branch's
 * current commit is what the push later compares and swaps against.
 */
async function preflight(ctx: TaskContext, task: Task): Promise<Delivery> {
  const workspace = task.spec.workspace!;
  const namespace = task.metadata.namespace;
  if (!workspace.publicationCredentialRef) throw new OrkaError("failed_precondition", "write workspace intent requires publicationCredentialRef before prompt execution");
  await workspaceCredential(ctx.store, namespace, workspace, "publicationCredentialRef");
  const repository = workspace.publicationGitRepo ?? workspace.gitRepo!;
  const branch = (workspace.pushBranch ?? defaultPushBranch(task)).replace(/^refs\/heads\//, "");
  const credential = await publicationReadCredential(ctx.store, namespace, workspace);
  const before = await remoteBranchSHA(ctx.git, { url: repository, credential }, branch);
  return { state: "Prepared", publicationRepository: repository, branch, ...(before ? { remoteBeforeSHA: before } : {}) };
}
