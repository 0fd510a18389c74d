// The GitHub peer's domain operations, shared by its REST routes and its test controls.
import { BareRepo } from "./git.ts";
import { HttpFailure, notFound, validationFailed } from "./http.ts";
import type { PullView } from "./shapes.ts";
import type { Account, CheckRunState, IssueState, Permission, PullState, RepoState, ReviewComment, ReviewState, StatusState } from "./state.ts";
import { nextId, now } from "./state.ts";

export const MERGE_METHODS = ["merge", "squash", "rebase"] as const;
export type MergeMethod = (typeof MERGE_METHODS)[number];
export const CHECK_RUN_STATUSES = ["queued", "in_progress", "completed"] as const;
export const CHECK_RUN_CONCLUSIONS = ["success", "failure", "neutral", "cancelled", "skipped", "timed_out", "action_required"] as const;
export const STATUS_STATES = ["error", "failure", "pending", "success"] as const;
export const REVIEW_EVENTS = { APPROVE: "APPROVED", REQUEST_CHANGES: "CHANGES_REQUESTED", COMMENT: "COMMENTED" } as const;

export class GithubModel {
  readonly repos = new Map<string, RepoState>();
  private readonly accounts = new Map<string, Account>();
  /** Every account's permission on every repository, as its tokens grant it. */
  private readonly permissions = new Map<string, Permission>();

  /** Where the bare repository of `owner/repo` lives on disk. */
  private readonly dirOf: (fullName: string) => string;

  constructor(dirOf: (fullName: string) => string) {
    this.dirOf = dirOf;
  }

  account(login: string): Account {
    const key = login.toLowerCase();
    let account = this.accounts.get(key);
    if (!account) this.accounts.set(key, (account = { login, id: nextId() }));
    return account;
  }

  grant(login: string, permission: Permission): Account {
    this.permissions.set(login.toLowerCase(), permission);
    return this.account(login);
  }

  permissionOf(repo: RepoState, login: string): "admin" | Permission | "none" {
    if (repo.owner.login.toLowerCase() === login.toLowerCase()) return "admin";
    return this.permissions.get(login.toLowerCase()) ?? "none";
  }

  knownAccount(login: string): Account | undefined {
    return this.accounts.get(login.toLowerCase());
  }

  async addRepo(fullName: string, options: { defaultBranch?: string; private?: boolean; files?: Record<string, string> }): Promise<RepoState> {
    const [owner, name] = fullName.split("/") as [string, string];
    const defaultBranch = options.defaultBranch ?? "main";
    const repo: RepoState = {
      id: nextId(), owner: this.account(owner), name, fullName, defaultBranch,
      private: options.private ?? false, git: await BareRepo.create(this.dirOf(fullName), defaultBranch), nextNumber: 1,
      issues: new Map(), checkRuns: [], statuses: [],
    };
    // A repository someone already pushed to keeps its history; a new one gets a first commit.
    if (!(await repo.git.head(repo.defaultBranch))) {
      await repo.git.commit(repo.defaultBranch, options.files ?? { "README.md": `# ${name}\n` }, "Initial commit");
    }
    this.repos.set(fullName.toLowerCase(), repo);
    return repo;
  }

  repo(fullName: string): RepoState {
    const repo = this.repos.get(fullName.toLowerCase());
    if (!repo) throw notFound();
    return repo;
  }

  issue(repo: RepoState, number: number): IssueState {
    const issue = repo.issues.get(number);
    if (!issue) throw notFound();
    return issue;
  }

  pull(repo: RepoState, number: number): IssueState & { pull: PullState } {
    const issue = this.issue(repo, number);
    if (!issue.pull) throw notFound();
    return issue as IssueState & { pull: PullState };
  }

  async resolve(repo: RepoState, ref: string): Promise<string> {
    if (/^[0-9a-f]{40}$/.test(ref)) return ref;
    const sha = await repo.git.head(ref.replace(/^(refs\/)?heads\//, ""));
    if (!sha) throw new HttpFailure(422, `No commit found for SHA: ${ref}`);
    return sha;
  }

  async view(repo: RepoState, issue: IssueState & { pull: PullState }): Promise<PullView> {
    const { pull } = issue;
    const headSha = pull.frozenHeadSha ?? (await repo.git.head(pull.head)) ?? "";
    const baseSha = pull.frozenBaseSha ?? (await repo.git.head(pull.base)) ?? "";
    return { repo, issue, pull, headSha, baseSha };
  }

  addIssue(repo: RepoState, fields: { title: string; body?: string | null; user: Account; assignees?: Account[]; labels?: string[] }, pull?: PullState): IssueState {
    const stamp = now();
    const issue: IssueState = {
      id: nextId(), number: repo.nextNumber++, title: fields.title, body: fields.body ?? null, user: fields.user,
      state: "open", assignees: fields.assignees ?? [], labels: fields.labels ?? [], createdAt: stamp, updatedAt: stamp,
      closedAt: null, comments: [], ...(pull ? { pull } : {}),
    };
    repo.issues.set(issue.number, issue);
    return issue;
  }

  async openPull(repo: RepoState, fields: { title?: unknown; head?: unknown; base?: unknown; body?: unknown; draft?: unknown; user: Account }): Promise<IssueState & { pull: PullState }> {
    if (typeof fields.title !== "string" || !fields.title) throw validationFailed({ resource: "PullRequest", field: "title", code: "missing_field" });
    if (typeof fields.base !== "string" || !(await repo.git.head(fields.base))) throw validationFailed({ resource: "PullRequest", field: "base", code: "invalid" });
    const head = typeof fields.head === "string" ? fields.head.replace(new RegExp(`^${repo.owner.login}:`, "i"), "") : "";
    if (!head || !(await repo.git.head(head))) throw validationFailed({ resource: "PullRequest", field: "head", code: "invalid" });
    if (head === fields.base) throw validationFailed({ resource: "PullRequest", code: "custom", message: `No commits between ${fields.base} and ${head}` });
    const open = [...repo.issues.values()].some((i) => i.pull && i.state === "open" && i.pull.head === head);
    if (open) throw validationFailed({ resource: "PullRequest", code: "custom", message: `A pull request already exists for ${repo.owner.login}:${head}.` });
    const pull: PullState = {
      id: nextId(), head, base: fields.base, draft: fields.draft === true, merged: false, mergedAt: null, mergedBy: null,
      mergeCommitSha: null, frozenHeadSha: null, frozenBaseSha: null, mergeable: true, reviews: [],
    };
    const body = typeof fields.body === "string" ? fields.body : null;
    return this.addIssue(repo, { title: fields.title, body, user: fields.user }, pull) as IssueState & { pull: PullState };
  }

  /** A check run as a CI system registers it; a conclusion alone completes it, and a completed run without one succeeded. */
  addCheckRun(repo: RepoState, fields: { name?: unknown; headSha: string; status?: unknown; conclusion?: unknown }): CheckRunState {
    if (typeof fields.name !== "string" || !fields.name) throw validationFailed({ resource: "CheckRun", field: "name", code: "missing_field" });
    const run: CheckRunState = { id: nextId(), headSha: fields.headSha, name: fields.name, status: "queued", conclusion: null };
    repo.checkRuns.push(run);
    return this.moveCheckRun(run, { status: fields.status ?? "completed", conclusion: fields.conclusion });
  }

  updateCheckRun(repo: RepoState, id: number, fields: { status?: unknown; conclusion?: unknown }): CheckRunState {
    const run = repo.checkRuns.find((r) => r.id === id);
    if (!run) throw notFound();
    return this.moveCheckRun(run, fields);
  }

  private moveCheckRun(run: CheckRunState, fields: { status?: unknown; conclusion?: unknown }): CheckRunState {
    const concluded = fields.conclusion !== undefined && fields.conclusion !== null;
    const status = concluded ? "completed" : (fields.status ?? run.status);
    if (!CHECK_RUN_STATUSES.includes(status as CheckRunState["status"])) throw validationFailed({ resource: "CheckRun", field: "status", code: "invalid" });
    const conclusion = status === "completed" ? ((concluded ? fields.conclusion : run.conclusion) ?? "success") : null;
    if (conclusion !== null && !CHECK_RUN_CONCLUSIONS.includes(conclusion as NonNullable<CheckRunState["conclusion"]>)) {
      throw validationFailed({ resource: "CheckRun", field: "conclusion", code: "invalid" });
    }
    return Object.assign(run, { status, conclusion });
  }

  addStatus(repo: RepoState, fields: { sha: string; state?: unknown; context?: unknown; description?: unknown }): StatusState {
    if (!STATUS_STATES.includes(fields.state as StatusState["state"])) throw validationFailed({ resource: "Status", field: "state", code: "invalid" });
    const status: StatusState = {
      id: nextId(), sha: fields.sha, context: typeof fields.context === "string" && fields.context ? fields.context : "default",
      state: fields.state as StatusState["state"], description: typeof fields.description === "string" ? fields.description : null, createdAt: now(),
    };
    repo.statuses.push(status);
    return status;
  }

  async close(repo: RepoState, issue: IssueState): Promise<void> {
    if (issue.pull && issue.state === "open") {
      issue.pull.frozenHeadSha = (await repo.git.head(issue.pull.head)) ?? null;
      issue.pull.frozenBaseSha = (await repo.git.head(issue.pull.base)) ?? null;
    }
    issue.state = "closed";
    issue.closedAt = issue.updatedAt = now();
  }

  async merge(repo: RepoState, issue: IssueState & { pull: PullState }, options: { sha?: unknown; method?: unknown; title?: unknown; user: Account }) {
    const method = options.method ?? "merge";
    if (!MERGE_METHODS.includes(method as MergeMethod)) {
      throw validationFailed({ resource: "PullRequest", field: "merge_method", code: "invalid" });
    }
    const { pull } = issue;
    if (pull.merged) throw new HttpFailure(405, "Pull Request is already merged");
    if (issue.state !== "open" || !pull.mergeable) throw new HttpFailure(405, "Pull Request is not mergeable");
    const { headSha, baseSha } = await this.view(repo, issue);
    if (options.sha !== undefined && options.sha !== headSha) throw new HttpFailure(409, "Head branch was modified. Review and try the merge again.");
    const title = typeof options.title === "string" ? options.title : `${issue.title} (#${issue.number})`;
    const sha = await this.mergedCommit(repo, method as MergeMethod, baseSha, headSha, title);
    if (!sha) throw new HttpFailure(405, "Pull Request is not mergeable");
    await this.close(repo, issue);
    await repo.git.setHead(pull.base, sha);
    Object.assign(pull, { merged: true, mergedAt: issue.closedAt, mergedBy: options.user, mergeCommitSha: sha });
    return { sha, merged: true, message: "Pull Request successfully merged" };
  }

  /** The commit the base branch moves to, made as GitHub makes it; undefined when the branches conflict. */
  private async mergedCommit(repo: RepoState, method: MergeMethod, baseSha: string, headSha: string, title: string): Promise<string | undefined> {
    if (method === "rebase") return repo.git.rebase(baseSha, headSha);
    const tree = await repo.git.mergeTree(baseSha, headSha);
    if (!tree) return undefined;
    return repo.git.commitObject(tree, method === "merge" ? [baseSha, headSha] : [baseSha], title);
  }

  async review(repo: RepoState, issue: IssueState & { pull: PullState }, fields: { event?: unknown; body?: unknown; comments?: unknown; commit_id?: unknown; user: Account }): Promise<ReviewState> {
    const event = fields.event;
    if (event !== undefined && !(typeof event === "string" && event in REVIEW_EVENTS)) {
      throw new HttpFailure(422, "Unprocessable Entity", [`Variable $event of type PullRequestReviewEvent was provided invalid value`]);
    }
    const state = event === undefined ? "PENDING" : REVIEW_EVENTS[event as keyof typeof REVIEW_EVENTS];
    if (state !== "COMMENTED" && state !== "PENDING" && fields.user.id === issue.user.id) {
      throw new HttpFailure(422, "Unprocessable Entity", ["Can not approve your own pull request"]);
    }
    const view = await this.view(repo, issue);
    const comments = await this.reviewComments(repo, view, fields.comments);
    const review: ReviewState = {
      id: nextId(), user: fields.user, body: typeof fields.body === "string" ? fields.body : "", state,
      commitId: typeof fields.commit_id === "string" ? fields.commit_id : view.headSha, submittedAt: now(), comments,
    };
    issue.pull.reviews.push(review);
    return review;
  }

  private async reviewComments(repo: RepoState, view: PullView, raw: unknown): Promise<ReviewComment[]> {
    if (raw === undefined) return [];
    if (!Array.isArray(raw)) throw validationFailed({ resource: "PullRequestReview", field: "comments", code: "invalid" });
    const files = await repo.git.files(view.baseSha, view.headSha);
    return raw.map((c: { path?: unknown; line?: unknown; body?: unknown }) => {
      const file = files.find((f) => f.filename === c.path);
      if (!file || typeof c.body !== "string" || (c.line !== undefined && !diffLines(file.patch).has(Number(c.line)))) {
        throw new HttpFailure(422, "Unprocessable Entity", ["Line could not be resolved"]);
      }
      return { path: file.filename, body: c.body, ...(c.line !== undefined ? { line: Number(c.line) } : {}) };
    });
  }
}

/** The new-file line numbers a file's patch shows, the lines GitHub lets a review comment on. */
function diffLines(patch: string): Set<number> {
  const lines = new Set<number>();
  for (const hunk of patch.matchAll(/^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@/gm)) {
    const start = Number(hunk[1]);
    const count = hunk[2] === undefined ? 1 : Number(hunk[2]);
    for (let line = start; line < start + count; line++) lines.add(line);
  }
  return lines;
}
