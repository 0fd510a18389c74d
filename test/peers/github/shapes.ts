// The JSON bodies the GitHub peer sends, shaped as GitHub's REST API shapes them (validated in the tests
// against the operation schemas of GitHub's OpenAPI description).
import type { CommitInfo } from "./git.ts";
import type { Account, CheckRunState, CommentState, IssueState, PullState, RepoState, ReviewState, StatusState } from "./state.ts";

const EPOCH = "2020-01-01T00:00:00Z";
const REPO_URL_KEYS = [
  "archive", "assignees", "blobs", "branches", "collaborators", "comments", "commits", "compare", "contents",
  "contributors", "deployments", "downloads", "events", "forks", "git_commits", "git_refs", "git_tags", "hooks",
  "issue_comment", "issue_events", "issues", "keys", "labels", "languages", "merges", "milestones", "notifications",
  "pulls", "releases", "stargazers", "statuses", "subscribers", "subscription", "tags", "teams", "trees",
];
const USER_URL_KEYS = ["events", "followers", "following", "gists", "organizations", "received_events", "repos", "starred", "subscriptions"];

export interface Site {
  api: string;
  web: string;
}

function urlsFor(keys: string[], base: string): Record<string, string> {
  return Object.fromEntries(keys.map((k) => [`${k}_url`, `${base}/${k}`]));
}

export function userShape(site: Site, user: Account) {
  return {
    login: user.login,
    id: user.id,
    node_id: `U_${user.id}`,
    avatar_url: `${site.web}/${user.login}.png`,
    gravatar_id: "",
    url: `${site.api}/users/${user.login}`,
    html_url: `${site.web}/${user.login}`,
    ...urlsFor(USER_URL_KEYS, `${site.api}/users/${user.login}`),
    type: "User",
    site_admin: false,
  };
}

export function authenticatedUserShape(site: Site, user: Account) {
  return {
    ...userShape(site, user),
    name: user.login, company: null, blog: "", location: null, email: null, hireable: null, bio: null,
    public_repos: 0, public_gists: 0, followers: 0, following: 0, created_at: EPOCH, updated_at: EPOCH,
    private_gists: 0, total_private_repos: 0, owned_private_repos: 0, disk_usage: 0, collaborators: 0,
    two_factor_authentication: true,
  };
}

function repoBase(site: Site, repo: RepoState) {
  const url = `${site.api}/repos/${repo.fullName}`;
  return {
    id: repo.id, node_id: `R_${repo.id}`, name: repo.name, full_name: repo.fullName, owner: userShape(site, repo.owner),
    private: repo.private, html_url: `${site.web}/${repo.fullName}`, description: null, fork: false, url,
    ...urlsFor(REPO_URL_KEYS, url),
  };
}

export function minimalRepoShape(site: Site, repo: RepoState) {
  return repoBase(site, repo);
}

export function repoShape(site: Site, repo: RepoState) {
  const openIssues = [...repo.issues.values()].filter((i) => i.state === "open").length;
  return {
    ...repoBase(site, repo),
    clone_url: `${site.web}/${repo.fullName}.git`, git_url: `git://example.test/${repo.fullName}.git`,
    ssh_url: `git@example.test:${repo.fullName}.git`, svn_url: `${site.web}/${repo.fullName}`, mirror_url: null,
    homepage: null, language: null, forks: 0, forks_count: 0, stargazers_count: 0, watchers: 0, watchers_count: 0,
    size: 0, default_branch: repo.defaultBranch, open_issues: openIssues, open_issues_count: openIssues,
    has_issues: true, has_projects: false, has_wiki: false, has_pages: false, has_downloads: false,
    has_discussions: false, archived: false, disabled: false, license: null,
    pushed_at: EPOCH, created_at: EPOCH, updated_at: EPOCH, network_count: 0, subscribers_count: 0,
    permissions: { admin: false, maintain: false, push: true, triage: true, pull: true },
  };
}

export interface PullView {
  repo: RepoState;
  issue: IssueState;
  pull: PullState;
  headSha: string;
  baseSha: string;
}

function branchShape(site: Site, repo: RepoState, ref: string, sha: string) {
  return { label: `${repo.owner.login}:${ref}`, ref, sha, user: userShape(site, repo.owner), repo: repoShape(site, repo) };
}

export function pullSimpleShape(site: Site, view: PullView) {
  const { repo, issue, pull } = view;
  const url = `${site.api}/repos/${repo.fullName}/pulls/${issue.number}`;
  const html = `${site.web}/${repo.fullName}/pull/${issue.number}`;
  const issueUrl = `${site.api}/repos/${repo.fullName}/issues/${issue.number}`;
  const statuses = `${site.api}/repos/${repo.fullName}/statuses/${view.headSha}`;
  return {
    url, id: pull.id, node_id: `PR_${pull.id}`, html_url: html, diff_url: `${html}.diff`, patch_url: `${html}.patch`,
    issue_url: issueUrl, commits_url: `${url}/commits`, review_comments_url: `${url}/comments`,
    review_comment_url: `${site.api}/repos/${repo.fullName}/pulls/comments{/number}`,
    comments_url: `${issueUrl}/comments`, statuses_url: statuses, number: issue.number, state: issue.state,
    locked: false, title: issue.title, user: userShape(site, issue.user), body: issue.body,
    labels: issue.labels.map((name, i) => labelShape(site, repo, name, i)), milestone: null, active_lock_reason: null,
    created_at: issue.createdAt, updated_at: issue.updatedAt, closed_at: issue.closedAt, merged_at: pull.mergedAt,
    merge_commit_sha: pull.mergeCommitSha, assignee: issue.assignees[0] ? userShape(site, issue.assignees[0]) : null,
    assignees: issue.assignees.map((a) => userShape(site, a)), requested_reviewers: [], requested_teams: [],
    head: branchShape(site, repo, pull.head, view.headSha), base: branchShape(site, repo, pull.base, view.baseSha),
    _links: {
      self: { href: url }, html: { href: html }, issue: { href: issueUrl }, comments: { href: `${issueUrl}/comments` },
      review_comments: { href: `${url}/comments` }, review_comment: { href: `${site.api}/repos/${repo.fullName}/pulls/comments{/number}` },
      commits: { href: `${url}/commits` }, statuses: { href: statuses },
    },
    author_association: "CONTRIBUTOR", auto_merge: null, draft: pull.draft,
  };
}

/** `mergeable` is null once the pull request is closed, as GitHub stops computing it. */
export function pullShape(site: Site, view: PullView, stats: { additions: number; deletions: number; changedFiles: number; mergeable: boolean | null }) {
  const { issue, pull } = view;
  return {
    ...pullSimpleShape(site, view),
    merged: pull.merged, mergeable: stats.mergeable, rebaseable: null,
    mergeable_state: stats.mergeable === false ? "dirty" : stats.mergeable ? "clean" : "unknown", merged_by: pull.mergedBy ? userShape(site, pull.mergedBy) : null,
    comments: issue.comments.length, review_comments: 0, maintainer_can_modify: false, commits: 1,
    additions: stats.additions, deletions: stats.deletions, changed_files: stats.changedFiles,
  };
}

function labelShape(site: Site, repo: RepoState, name: string, index: number) {
  return {
    id: repo.id * 100 + index, node_id: `LA_${repo.id}_${index}`, url: `${site.api}/repos/${repo.fullName}/labels/${encodeURIComponent(name)}`,
    name, description: null, color: "ededed", default: false,
  };
}

export function issueShape(site: Site, repo: RepoState, issue: IssueState) {
  const url = `${site.api}/repos/${repo.fullName}/issues/${issue.number}`;
  const html = `${site.web}/${repo.fullName}/${issue.pull ? "pull" : "issues"}/${issue.number}`;
  return {
    id: issue.id, node_id: `I_${issue.id}`, url, repository_url: `${site.api}/repos/${repo.fullName}`,
    labels_url: `${url}/labels{/name}`, comments_url: `${url}/comments`, events_url: `${url}/events`, html_url: html,
    number: issue.number, state: issue.state, state_reason: null, title: issue.title, body: issue.body,
    user: userShape(site, issue.user), labels: issue.labels.map((name, i) => labelShape(site, repo, name, i)),
    assignee: issue.assignees[0] ? userShape(site, issue.assignees[0]) : null,
    assignees: issue.assignees.map((a) => userShape(site, a)), milestone: null, locked: false, active_lock_reason: null,
    comments: issue.comments.length, closed_at: issue.closedAt, created_at: issue.createdAt, updated_at: issue.updatedAt,
    author_association: "CONTRIBUTOR",
    ...(issue.pull
      ? {
          pull_request: {
            url: `${site.api}/repos/${repo.fullName}/pulls/${issue.number}`, html_url: html,
            diff_url: `${html}.diff`, patch_url: `${html}.patch`, merged_at: issue.pull.mergedAt,
          },
        }
      : {}),
  };
}

export function commentShape(site: Site, repo: RepoState, issue: IssueState, comment: CommentState) {
  return {
    id: comment.id, node_id: `IC_${comment.id}`, url: `${site.api}/repos/${repo.fullName}/issues/comments/${comment.id}`,
    html_url: `${site.web}/${repo.fullName}/issues/${issue.number}#issuecomment-${comment.id}`, body: comment.body,
    user: userShape(site, comment.user), created_at: comment.createdAt, updated_at: comment.createdAt,
    issue_url: `${site.api}/repos/${repo.fullName}/issues/${issue.number}`, author_association: "CONTRIBUTOR",
  };
}

export function reviewShape(site: Site, repo: RepoState, number: number, review: ReviewState) {
  const html = `${site.web}/${repo.fullName}/pull/${number}#pullrequestreview-${review.id}`;
  const pullUrl = `${site.api}/repos/${repo.fullName}/pulls/${number}`;
  return {
    id: review.id, node_id: `PRR_${review.id}`, user: userShape(site, review.user), body: review.body,
    state: review.state, html_url: html, pull_request_url: pullUrl,
    _links: { html: { href: html }, pull_request: { href: pullUrl } },
    submitted_at: review.submittedAt, commit_id: review.commitId, author_association: "CONTRIBUTOR",
  };
}

export function fileShape(site: Site, repo: RepoState, headSha: string, file: { filename: string; status: string; additions: number; deletions: number; patch: string; sha: string }) {
  const path = encodeURIComponent(file.filename);
  return {
    sha: file.sha, filename: file.filename, status: file.status, additions: file.additions, deletions: file.deletions,
    changes: file.additions + file.deletions, blob_url: `${site.web}/${repo.fullName}/blob/${headSha}/${path}`,
    raw_url: `${site.web}/${repo.fullName}/raw/${headSha}/${path}`,
    contents_url: `${site.api}/repos/${repo.fullName}/contents/${path}?ref=${headSha}`, patch: file.patch,
  };
}

export function checkRunShape(site: Site, repo: RepoState, run: CheckRunState) {
  const url = `${site.api}/repos/${repo.fullName}/check-runs/${run.id}`;
  const completed = run.status === "completed";
  return {
    id: run.id, node_id: `CR_${run.id}`, head_sha: run.headSha, external_id: null, url,
    html_url: `${site.web}/${repo.fullName}/runs/${run.id}`, details_url: null, status: run.status,
    conclusion: completed ? run.conclusion : null, started_at: EPOCH, completed_at: completed ? EPOCH : null,
    output: { title: null, summary: null, text: null, annotations_count: 0, annotations_url: `${url}/annotations` },
    name: run.name, check_suite: { id: run.id }, app: null, pull_requests: [],
  };
}

export function statusShape(site: Site, repo: RepoState, status: StatusState) {
  return {
    url: `${site.api}/repos/${repo.fullName}/statuses/${status.sha}`, avatar_url: null, id: status.id,
    node_id: `SC_${status.id}`, state: status.state, description: status.description, target_url: null,
    context: status.context, created_at: status.createdAt, updated_at: status.createdAt,
  };
}

export function combinedStatusShape(site: Site, repo: RepoState, sha: string, statuses: StatusState[]) {
  const states = new Set(statuses.map((s) => s.state));
  const state = states.has("error") || states.has("failure") ? "failure" : states.has("pending") || statuses.length === 0 ? "pending" : "success";
  return {
    state, sha, total_count: statuses.length, statuses: statuses.map((s) => statusShape(site, repo, s)),
    repository: minimalRepoShape(site, repo), commit_url: `${site.api}/repos/${repo.fullName}/commits/${sha}`,
    url: `${site.api}/repos/${repo.fullName}/commits/${sha}/status`,
  };
}

export function commitShape(site: Site, repo: RepoState, commit: CommitInfo) {
  const url = `${site.api}/repos/${repo.fullName}/commits/${commit.sha}`;
  const who = commit.author;
  return {
    url, sha: commit.sha, node_id: `C_${commit.sha}`, html_url: `${site.web}/${repo.fullName}/commit/${commit.sha}`,
    comments_url: `${url}/comments`,
    commit: {
      url: `${site.api}/repos/${repo.fullName}/git/commits/${commit.sha}`, author: who, committer: who, message: commit.message,
      comment_count: 0, tree: { sha: commit.tree, url: `${site.api}/repos/${repo.fullName}/git/trees/${commit.tree}` },
    },
    // The peer's commits are written by no GitHub account, as commits by an unknown e-mail address are.
    author: null, committer: null,
    parents: commit.parents.map((sha) => ({ sha, url: `${site.api}/repos/${repo.fullName}/commits/${sha}` })),
  };
}

export function permissionShape(site: Site, user: Account, permission: "admin" | "write" | "read" | "none") {
  return { permission, role_name: permission, user: { ...userShape(site, user), role_name: permission } };
}
