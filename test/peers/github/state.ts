// What the GitHub peer remembers: accounts, tokens, repositories and their pulls, issues, reviews and CI.
import type { BareRepo } from "./git.ts";

export type Permission = "read" | "write";

export interface Account {
  login: string;
  id: number;
}

export interface RepoState {
  id: number;
  owner: Account;
  name: string;
  fullName: string;
  defaultBranch: string;
  private: boolean;
  git: BareRepo;
  nextNumber: number;
  issues: Map<number, IssueState>;
  checkRuns: CheckRunState[];
  statuses: StatusState[];
}

export interface CommentState {
  id: number;
  user: Account;
  body: string;
  createdAt: string;
}

export interface IssueState {
  id: number;
  number: number;
  title: string;
  body: string | null;
  user: Account;
  state: "open" | "closed";
  assignees: Account[];
  labels: string[];
  createdAt: string;
  updatedAt: string;
  closedAt: string | null;
  comments: CommentState[];
  /** Present when this issue is a pull request. */
  pull?: PullState;
}

export interface PullState {
  id: number;
  head: string;
  base: string;
  draft: boolean;
  merged: boolean;
  mergedAt: string | null;
  mergedBy: Account | null;
  mergeCommitSha: string | null;
  /** The head SHA frozen when the pull request stops following its branch (closed or merged). */
  frozenHeadSha: string | null;
  /** The base SHA frozen with it, so a merged pull request keeps showing the diff it merged. */
  frozenBaseSha: string | null;
  /** Set false by a test to play a pull request GitHub refuses to merge. */
  mergeable: boolean;
  reviews: ReviewState[];
}

export interface ReviewComment {
  path: string;
  line?: number;
  body: string;
}

export interface ReviewState {
  id: number;
  user: Account;
  body: string;
  state: "APPROVED" | "CHANGES_REQUESTED" | "COMMENTED" | "PENDING";
  commitId: string;
  submittedAt: string;
  comments: ReviewComment[];
}

export interface CheckRunState {
  id: number;
  headSha: string;
  name: string;
  status: "queued" | "in_progress" | "completed";
  conclusion: "success" | "failure" | "neutral" | "cancelled" | "skipped" | "timed_out" | "action_required" | null;
}

export interface StatusState {
  id: number;
  sha: string;
  context: string;
  state: "error" | "failure" | "pending" | "success";
  description: string | null;
  createdAt: string;
}

export function now(): string {
  return new Date().toISOString().replace(/\.\d{3}Z$/, "Z");
}

let lastId = 1000;
export function nextId(): number {
  return ++lastId;
}
