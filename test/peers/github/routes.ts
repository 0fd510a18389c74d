// The REST operations the GitHub peer serves, each a method, a path pattern and a handler.
import { HttpFailure, paged, validationFailed, type Reply } from "./http.ts";
import type { GithubModel } from "./model.ts";
import * as shape from "./shapes.ts";
import type { Account, IssueState, RepoState } from "./state.ts";
import { nextId, now } from "./state.ts";

export interface RouteContext {
  model: GithubModel;
  site: shape.Site;
  url: URL;
  params: string[];
  body: Record<string, unknown>;
  account: Account;
  accept: string;
  repo: () => RepoState;
}

export interface Route {
  method: string;
  pattern: RegExp;
  handle: (ctx: RouteContext) => Promise<Reply>;
}

const REPO = "/repos/([^/]+)/([^/]+)";
const ok = (body: unknown, headers?: Record<string, string>): Reply => ({ status: 200, body, ...(headers ? { headers } : {}) });
const created = (body: unknown): Reply => ({ status: 201, body });

function page<T>(ctx: RouteContext, items: T[]) {
  return paged(items, { url: ctx.url, base: ctx.site.api });
}

function list<T>(ctx: RouteContext, items: T[], render: (item: T) => unknown): Reply {
  const { items: slice, headers } = page(ctx, items);
  return ok(slice.map(render), headers);
}

const number = (ctx: RouteContext) => Number(ctx.params[2]);
const pullOf = (ctx: RouteContext) => ctx.model.pull(ctx.repo(), number(ctx));

async function pullReply(ctx: RouteContext, issue: IssueState & { pull: NonNullable<IssueState["pull"]> }): Promise<Reply> {
  const repo = ctx.repo();
  const view = await ctx.model.view(repo, issue);
  if (/application\/vnd\.github(\.v3)?\.diff/.test(ctx.accept)) {
    return { status: 200, body: await repo.git.diff(view.baseSha, view.headSha), headers: { "content-type": "application/vnd.github.diff; charset=utf-8" } };
  }
  const files = await repo.git.files(view.baseSha, view.headSha);
  const additions = files.reduce((n, f) => n + f.additions, 0);
  const deletions = files.reduce((n, f) => n + f.deletions, 0);
  const mergeable = issue.state === "open" ? issue.pull.mergeable && (await repo.git.mergeTree(view.baseSha, view.headSha)) !== undefined : null;
  return ok(shape.pullShape(ctx.site, view, { additions, deletions, changedFiles: files.length, mergeable }));
}

function matchesAssignee(issue: IssueState, filter: string | null): boolean {
  if (filter === null) return true;
  if (filter === "none") return issue.assignees.length === 0;
  if (filter === "*") return issue.assignees.length > 0;
  return issue.assignees.some((a) => a.login.toLowerCase() === filter.toLowerCase());
}

function matchesState(state: string, wanted: string | null): boolean {
  return (wanted ?? "open") === "all" || state === (wanted ?? "open");
}

export const routes: Route[] = [
  { method: "GET", pattern: /^\/user$/, handle: async (ctx) => ok(shape.authenticatedUserShape(ctx.site, ctx.account)) },
  { method: "GET", pattern: new RegExp(`^${REPO}$`), handle: async (ctx) => ok(shape.repoShape(ctx.site, ctx.repo())) },
  {
    method: "GET",
    pattern: new RegExp(`^${REPO}/git/ref/heads/(.+)$`),
    handle: async (ctx) => {
      const repo = ctx.repo();
      const branch = ctx.params[2]!;
      const sha = await repo.git.head(branch);
      if (!sha) throw new HttpFailure(404, "Not Found");
      const url = `${ctx.site.api}/repos/${repo.fullName}/git/refs/heads/${branch}`;
      return ok({ ref: `refs/heads/${branch}`, node_id: `REF_${sha.slice(0, 12)}`, url, object: { type: "commit", sha, url: `${ctx.site.api}/repos/${repo.fullName}/git/commits/${sha}` } });
    },
  },
  {
    method: "POST",
    pattern: new RegExp(`^${REPO}/pulls$`),
    handle: async (ctx) => {
      const issue = await ctx.model.openPull(ctx.repo(), { ...ctx.body, user: ctx.account });
      return { ...(await pullReply(ctx, issue)), status: 201 };
    },
  },
  {
    method: "GET",
    pattern: new RegExp(`^${REPO}/pulls$`),
    handle: async (ctx) => {
      const repo = ctx.repo();
      const q = ctx.url.searchParams;
      const head = q.get("head")?.replace(/^[^:]*:/, "");
      const pulls = [...repo.issues.values()]
        .filter((i): i is IssueState & { pull: NonNullable<IssueState["pull"]> } => i.pull !== undefined)
        .filter((i) => matchesState(i.state, q.get("state")) && (!head || i.pull.head === head) && (!q.get("base") || i.pull.base === q.get("base")))
        .reverse();
      const { items, headers } = page(ctx, pulls);
      const views = await Promise.all(items.map((i) => ctx.model.view(repo, i)));
      return ok(views.map((v) => shape.pullSimpleShape(ctx.site, v)), headers);
    },
  },
  { method: "GET", pattern: new RegExp(`^${REPO}/pulls/(\\d+)$`), handle: async (ctx) => pullReply(ctx, pullOf(ctx)) },
  {
    method: "GET",
    pattern: new RegExp(`^${REPO}/pulls/(\\d+)/files$`),
    handle: async (ctx) => {
      const repo = ctx.repo();
      const view = await ctx.model.view(repo, pullOf(ctx));
      const files = await repo.git.files(view.baseSha, view.headSha);
      return list(ctx, files, (f) => shape.fileShape(ctx.site, repo, view.headSha, f));
    },
  },
  {
    method: "GET",
    pattern: new RegExp(`^${REPO}/pulls/(\\d+)/reviews$`),
    handle: async (ctx) => list(ctx, pullOf(ctx).pull.reviews, (r) => shape.reviewShape(ctx.site, ctx.repo(), number(ctx), r)),
  },
  {
    method: "POST",
    pattern: new RegExp(`^${REPO}/pulls/(\\d+)/reviews$`),
    handle: async (ctx) => {
      const review = await ctx.model.review(ctx.repo(), pullOf(ctx), { ...ctx.body, user: ctx.account });
      return ok(shape.reviewShape(ctx.site, ctx.repo(), number(ctx), review));
    },
  },
  {
    method: "PUT",
    pattern: new RegExp(`^${REPO}/pulls/(\\d+)/merge$`),
    handle: async (ctx) => {
      const { sha, merge_method: method, commit_title: title } = ctx.body;
      return ok(await ctx.model.merge(ctx.repo(), pullOf(ctx), { sha, method, title, user: ctx.account }));
    },
  },
  {
    method: "GET",
    pattern: new RegExp(`^${REPO}/commits/([^/]+)/check-runs$`),
    handle: async (ctx) => {
      const repo = ctx.repo();
      const sha = await ctx.model.resolve(repo, ctx.params[2]!);
      const runs = repo.checkRuns.filter((r) => r.headSha === sha);
      const { items, headers } = page(ctx, runs);
      return ok({ total_count: runs.length, check_runs: items.map((r) => shape.checkRunShape(ctx.site, repo, r)) }, headers);
    },
  },
  {
    method: "POST",
    pattern: new RegExp(`^${REPO}/check-runs$`),
    handle: async (ctx) => {
      const repo = ctx.repo();
      const { head_sha: headSha, name, status, conclusion } = ctx.body;
      if (typeof headSha !== "string" || !headSha) throw validationFailed({ resource: "CheckRun", field: "head_sha", code: "missing_field" });
      const run = ctx.model.addCheckRun(repo, { name, status, conclusion, headSha: await ctx.model.resolve(repo, headSha) });
      return created(shape.checkRunShape(ctx.site, repo, run));
    },
  },
  {
    method: "PATCH",
    pattern: new RegExp(`^${REPO}/check-runs/(\\d+)$`),
    handle: async (ctx) => {
      const repo = ctx.repo();
      const { status, conclusion } = ctx.body;
      return ok(shape.checkRunShape(ctx.site, repo, ctx.model.updateCheckRun(repo, number(ctx), { status, conclusion })));
    },
  },
  {
    method: "POST",
    pattern: new RegExp(`^${REPO}/statuses/([0-9a-f]{40})$`),
    handle: async (ctx) => {
      const repo = ctx.repo();
      const { state, context, description } = ctx.body;
      const status = ctx.model.addStatus(repo, { sha: ctx.params[2]!, state, context, description });
      return created({ ...shape.statusShape(ctx.site, repo, status), creator: shape.userShape(ctx.site, ctx.account) });
    },
  },
  {
    method: "GET",
    pattern: new RegExp(`^${REPO}/commits/([^/]+)/status$`),
    handle: async (ctx) => {
      const repo = ctx.repo();
      const sha = await ctx.model.resolve(repo, ctx.params[2]!);
      // GitHub combines only the latest status of each context.
      const latest = new Map(repo.statuses.filter((s) => s.sha === sha).map((s) => [s.context, s]));
      const { items, headers } = page(ctx, [...latest.values()].reverse());
      return ok({ ...shape.combinedStatusShape(ctx.site, repo, sha, [...latest.values()]), statuses: items.map((s) => shape.statusShape(ctx.site, repo, s)) }, headers);
    },
  },
  {
    method: "GET",
    pattern: new RegExp(`^${REPO}/compare/(.+)\\.\\.\\.(.+)$`),
    handle: async (ctx) => {
      const repo = ctx.repo();
      const [base, head] = await Promise.all([ctx.model.resolve(repo, ctx.params[2]!), ctx.model.resolve(repo, ctx.params[3]!)]);
      const mergeBase = await repo.git.mergeBase(base, head);
      const [ahead, behind] = await Promise.all([repo.git.count(`${mergeBase}..${head}`), repo.git.count(`${mergeBase}..${base}`)]);
      const status = ahead === 0 && behind === 0 ? "identical" : behind === 0 ? "ahead" : ahead === 0 ? "behind" : "diverged";
      const [baseCommit] = await repo.git.log(`${base}^!`);
      const [mergeBaseCommit] = await repo.git.log(`${mergeBase}^!`);
      const commits = await repo.git.log(`${mergeBase}..${head}`);
      const files = await repo.git.files(base, head);
      const url = `${ctx.site.api}/repos/${repo.fullName}/compare/${ctx.params[2]}...${ctx.params[3]}`;
      const html = `${ctx.site.web}/${repo.fullName}/compare/${ctx.params[2]}...${ctx.params[3]}`;
      return ok({
        url, html_url: html, permalink_url: `${ctx.site.web}/${repo.fullName}/compare/${base}...${head}`,
        diff_url: `${html}.diff`, patch_url: `${html}.patch`, status, ahead_by: ahead, behind_by: behind, total_commits: ahead,
        base_commit: shape.commitShape(ctx.site, repo, baseCommit!), merge_base_commit: shape.commitShape(ctx.site, repo, mergeBaseCommit!),
        commits: commits.map((c) => shape.commitShape(ctx.site, repo, c)), files: files.map((f) => shape.fileShape(ctx.site, repo, head, f)),
      });
    },
  },
  {
    method: "GET",
    pattern: new RegExp(`^${REPO}/collaborators/([^/]+)/permission$`),
    handle: async (ctx) => {
      const repo = ctx.repo();
      const user = ctx.model.knownAccount(ctx.params[2]!);
      if (!user) throw new HttpFailure(404, `${ctx.params[2]} is not a user`);
      return ok(shape.permissionShape(ctx.site, user, ctx.model.permissionOf(repo, user.login)));
    },
  },
  {
    method: "GET",
    pattern: new RegExp(`^${REPO}/issues$`),
    handle: async (ctx) => {
      const repo = ctx.repo();
      const q = ctx.url.searchParams;
      const labels = q.get("labels")?.split(",").filter(Boolean) ?? [];
      const issues = [...repo.issues.values()]
        .filter((i) => matchesState(i.state, q.get("state")) && matchesAssignee(i, q.get("assignee")) && labels.every((l) => i.labels.includes(l)))
        .reverse();
      return list(ctx, issues, (i) => shape.issueShape(ctx.site, repo, i));
    },
  },
  {
    method: "GET",
    pattern: new RegExp(`^${REPO}/issues/(\\d+)$`),
    handle: async (ctx) => ok(shape.issueShape(ctx.site, ctx.repo(), ctx.model.issue(ctx.repo(), number(ctx)))),
  },
  {
    method: "GET",
    pattern: new RegExp(`^${REPO}/issues/(\\d+)/comments$`),
    handle: async (ctx) => {
      const issue = ctx.model.issue(ctx.repo(), number(ctx));
      return list(ctx, issue.comments, (c) => shape.commentShape(ctx.site, ctx.repo(), issue, c));
    },
  },
  {
    method: "POST",
    pattern: new RegExp(`^${REPO}/issues/(\\d+)/comments$`),
    handle: async (ctx) => {
      const issue = ctx.model.issue(ctx.repo(), number(ctx));
      if (typeof ctx.body.body !== "string" || !ctx.body.body) throw validationFailed({ resource: "IssueComment", field: "body", code: "missing_field" });
      const comment = { id: nextId(), user: ctx.account, body: ctx.body.body, createdAt: now() };
      issue.comments.push(comment);
      issue.updatedAt = comment.createdAt;
      return created(shape.commentShape(ctx.site, ctx.repo(), issue, comment));
    },
  },
];
