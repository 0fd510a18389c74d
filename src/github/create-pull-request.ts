// create_pull_request: a pull request only for a branch Orka's publisher verified, never for what a
// model says it pushed. The receipt is checked before any credential is read; GitHub is then asked
// whether the branch is still where the publisher saw it, and the pull request is opened once.
import type { Octokit } from "@octokit/rest";
import type { Delivery, Task } from "../resources/task.ts";
import { OrkaError } from "../util/errors.ts";
import { githubFailure, isGithubRequestError } from "./failure.ts";
import type { RepoName } from "./ci.ts";
import { repoOfSetting, sameRepo, type RepoRef } from "./repo-url.ts";
import { PULL_REQUEST_TEXT_LIMITS } from "../resources/workspace.ts";
import { codePointLength } from "../util/text.ts";

const LOOKUP_PAGE_SIZE = 10;

export interface PullRequestText {
  headBranch: string;
  baseBranch: string;
  title: string;
  body?: string;
}

export interface CreatedPullRequest {
  pr_url: string;
  pr_number: number;
  status: "created" | "existing";
}

/** What a verified receipt lets the tool do: where the head lives, which branch, and the commit it must still be at. */
export interface VerifiedPublication {
  /** The repository the publisher pushed to (the publication repository, else the source). */
  headRepo: RepoRef;
  branch: string;
  verifiedSha: string;
  existing?: CreatedPullRequest;
}

const lowerName = (name: RepoName) => `${name.owner}/${name.repo}`.toLowerCase();
const shortBranch = (branch: string) => branch.trim().replace(/^refs\/heads\//, "");

/** Title and body limits, checked before anything is read. */
export function checkPullRequestText(text: PullRequestText): void {
  if (!text.title.trim()) throw new OrkaError("invalid_argument", "title must not be blank");
  const limits = PULL_REQUEST_TEXT_LIMITS;
  if (codePointLength(text.title) > limits.title) throw new OrkaError("invalid_argument", `title exceeds ${limits.title} characters`);
  if (text.body !== undefined && codePointLength(text.body) > limits.body) throw new OrkaError("invalid_argument", `body exceeds ${limits.body} characters`);
}

function receiptGap(delivery: Delivery): string | undefined {
  if (!delivery.publicationID) return "it has no publicationID";
  if (!delivery.artifactDigest) return "it has no artifactDigest";
  if (!delivery.branch) return "it names no branch";
  if (!delivery.verifiedRemoteSHA) return "it has no verifiedRemoteSHA";
  if (delivery.expectedCommitSHA !== delivery.verifiedRemoteSHA) return "the commit read back differs from the commit expected";
  return undefined;
}

/**
 * The Task's terminal verified receipt, checked whole: outcome VerifiedExact, the expected commit read
 * back from the remote, a publication id and artifact digest, the publication repository of the
 * workspace, and the branch the caller names. Refusals say what is missing.
 */
export function verifiedPublication(task: Task, headBranch: string): VerifiedPublication {
  const name = task.metadata.name;
  const delivery = task.status?.delivery;
  if (!delivery || delivery.outcome !== "VerifiedExact") {
    throw new OrkaError("failed_precondition", `task ${name} has no verified delivery receipt (outcome=${delivery?.outcome ?? delivery?.state ?? "none"})`);
  }
  const gap = receiptGap(delivery);
  if (gap) throw new OrkaError("failed_precondition", `task ${name} has an incomplete verified delivery receipt: ${gap}`);
  const workspace = task.spec.workspace;
  const configured = workspace?.publicationGitRepo ?? workspace?.gitRepo;
  const headRepo = configured ? repoOfSetting(configured) : undefined;
  const published = delivery.publicationRepository ? repoOfSetting(delivery.publicationRepository) : undefined;
  if (!headRepo || !published || !sameRepo(headRepo, published)) {
    throw new OrkaError("failed_precondition", `task ${name} delivery receipt names publication repository "${delivery.publicationRepository ?? ""}", not the workspace's publication repository`);
  }
  const branch = delivery.branch!;
  if (shortBranch(headBranch) !== branch) {
    throw new OrkaError("invalid_argument", `head_branch "${headBranch}" is not the verified delivery branch "${branch}" of task ${name}`);
  }
  const receipt = delivery.prReceipt;
  return {
    headRepo,
    branch,
    verifiedSha: delivery.verifiedRemoteSHA!,
    ...(receipt ? { existing: { pr_url: receipt.url, pr_number: receipt.number, status: "existing" } } : {}),
  };
}

/** Refuses a branch that moved (or vanished) since the publisher verified it. */
async function requireBranchAtVerifiedSha(client: Octokit, publication: VerifiedPublication): Promise<void> {
  const { headRepo, branch } = publication;
  let sha: string;
  try {
    sha = (await client.rest.git.getRef({ owner: headRepo.owner, repo: headRepo.repo, ref: `heads/${branch}` })).data.object.sha;
  } catch (err) {
    if (isGithubRequestError(err) && err.status === 404) sha = "";
    else throw githubFailure(err, "failed to read the publication branch");
  }
  if (sha !== publication.verifiedSha) throw new OrkaError("conflict", "publication branch moved since verified delivery");
}

function saysAlreadyExists(err: unknown): boolean {
  return isGithubRequestError(err) && err.status === 422 && /pull request already exists/i.test(`${err.message} ${JSON.stringify(err.response?.data ?? "")}`);
}

async function findOpenPullRequest(client: Octokit, baseRepo: RepoName, head: string, base: string): Promise<CreatedPullRequest> {
  let found;
  try {
    ({ data: found } = await client.rest.pulls.list({ owner: baseRepo.owner, repo: baseRepo.repo, state: "open", head, base, per_page: LOOKUP_PAGE_SIZE }));
  } catch (err) {
    throw new OrkaError("unavailable", `GitHub reported an existing pull request, but lookup failed: ${githubFailure(err).message}`);
  }
  const first = found[0];
  if (!first) throw new OrkaError("not_found", `no open pull request found for head "${head}" and base "${base}"`);
  return { pr_url: first.html_url, pr_number: first.number, status: "existing" };
}

/**
 * Opens the pull request of a verified publication against the source repository's base branch; a
 * head in another repository is named `<owner>:<branch>`. GitHub's "already exists" answer is
 * resolved to that pull request, so a repeated call returns the same number.
 */
export async function openVerifiedPullRequest(client: Octokit, baseRepo: RepoName, publication: VerifiedPublication, text: PullRequestText): Promise<CreatedPullRequest> {
  if (publication.existing) return publication.existing;
  await requireBranchAtVerifiedSha(client, publication);
  const qualifiedHead = `${publication.headRepo.owner}:${publication.branch}`;
  const head = lowerName(publication.headRepo) === lowerName(baseRepo) ? publication.branch : qualifiedHead;
  const base = shortBranch(text.baseBranch);
  try {
    const { data } = await client.rest.pulls.create({ owner: baseRepo.owner, repo: baseRepo.repo, head, base, title: text.title, ...(text.body !== undefined ? { body: text.body } : {}) });
    return { pr_url: data.html_url, pr_number: data.number, status: "created" };
  } catch (err) {
    if (saysAlreadyExists(err)) return findOpenPullRequest(client, baseRepo, qualifiedHead, base);
    throw githubFailure(err, "failed to create pull request");
  }
}
