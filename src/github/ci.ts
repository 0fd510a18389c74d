// The one CI verdict every GitHub tool uses: a commit's check runs and its commit statuses,
// combined so that a failure anywhere beats anything still running.
import type { Octokit } from "@octokit/rest";

export type CiState = "passed" | "failed" | "pending" | "no_checks";

export interface CiVerdict {
  state: CiState;
  /** What kept the verdict from passing: `<name> (status=…)`, `<name> (conclusion=…)`, `<context> (state=…)`, joined with "; ". */
  details: string;
}

export interface CheckRunSummary {
  name: string;
  status: string;
  conclusion: string | null;
}

export interface CommitStatusSummary {
  context: string;
  state: string;
}

/** A repository as GitHub's REST paths name it. */
export interface RepoName {
  owner: string;
  repo: string;
}

export interface CommitRef extends RepoName {
  sha: string;
}

/** The check runs GitHub reported, and how many it said there are. */
export interface CheckRunReport {
  runs: CheckRunSummary[];
  totalCount: number;
}

const PASSING_CONCLUSIONS = new Set(["success", "neutral", "skipped"]);
const PER_PAGE = 100;
/** Pages read before giving up on a commit with more runs than this; what is left unread counts as pending. */
const MAX_PAGES = 10;

type Outcome = "pass" | "fail" | "pending";

interface Entry {
  outcome: Outcome;
  detail: string;
}

function checkRunEntry(run: CheckRunSummary): Entry {
  if (run.status !== "completed") return { outcome: "pending", detail: `${run.name} (status=${run.status})` };
  if (run.conclusion !== null && PASSING_CONCLUSIONS.has(run.conclusion)) return { outcome: "pass", detail: "" };
  return { outcome: "fail", detail: `${run.name} (conclusion=${run.conclusion ?? "none"})` };
}

function statusEntry(status: CommitStatusSummary): Entry {
  if (status.state === "success") return { outcome: "pass", detail: "" };
  return { outcome: status.state === "pending" ? "pending" : "fail", detail: `${status.context} (state=${status.state})` };
}

/**
 * The verdict of a commit's check runs and statuses: failed if any failed, else pending if any is
 * still running (or GitHub reported more runs than were read), else passed if there was anything
 * at all, else no checks.
 */
export function combineCi(checkRuns: CheckRunReport, statuses: CommitStatusSummary[]): CiVerdict {
  const entries = [...checkRuns.runs.map(checkRunEntry), ...statuses.map(statusEntry)];
  const unread = checkRuns.totalCount - checkRuns.runs.length;
  if (unread > 0) entries.push({ outcome: "pending", detail: `${unread} of ${checkRuns.totalCount} check runs not yet read` });
  const details = entries.filter((e) => e.outcome !== "pass").map((e) => e.detail).join("; ");
  const has = (outcome: Outcome) => entries.some((e) => e.outcome === outcome);
  if (has("fail")) return { state: "failed", details };
  if (has("pending")) return { state: "pending", details };
  return { state: entries.length > 0 ? "passed" : "no_checks", details };
}

/** Every check run of the commit, page by page until GitHub's total_count is reached. */
async function readCheckRuns(octokit: Octokit, ref: CommitRef, signal?: AbortSignal): Promise<CheckRunReport> {
  const runs: CheckRunSummary[] = [];
  let totalCount = 0;
  for (let page = 1; page <= MAX_PAGES; page++) {
    const { data } = await octokit.rest.checks.listForRef({ owner: ref.owner, repo: ref.repo, ref: ref.sha, per_page: PER_PAGE, page, request: { signal } });
    totalCount = data.total_count;
    runs.push(...data.check_runs.map((run) => ({ name: run.name, status: run.status, conclusion: run.conclusion })));
    if (runs.length >= totalCount || data.check_runs.length < PER_PAGE) break;
  }
  return { runs, totalCount };
}

/** The latest status of each context on the commit (GitHub combines them so). */
async function readCommitStatuses(octokit: Octokit, ref: CommitRef, signal?: AbortSignal): Promise<CommitStatusSummary[]> {
  const statuses: CommitStatusSummary[] = [];
  for (let page = 1; page <= MAX_PAGES; page++) {
    const { data } = await octokit.rest.repos.getCombinedStatusForRef({ owner: ref.owner, repo: ref.repo, ref: ref.sha, per_page: PER_PAGE, page, request: { signal } });
    statuses.push(...data.statuses.map((status) => ({ context: status.context, state: status.state })));
    if (statuses.length >= data.total_count || data.statuses.length < PER_PAGE) break;
  }
  return statuses;
}

/** Reads the commit's check runs and statuses from GitHub and combines them into one verdict. */
export async function evaluateCi(octokit: Octokit, ref: CommitRef, signal?: AbortSignal): Promise<CiVerdict> {
  const checkRuns = await readCheckRuns(octokit, ref, signal);
  const statuses = await readCommitStatuses(octokit, ref, signal);
  return combineCi(checkRuns, statuses);
}
