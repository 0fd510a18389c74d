// A stateful GitHub REST peer for tests: the official Octokit client, pointed at it with `baseUrl`,
// works unchanged. Repositories are real bare git repositories in a temporary directory, so heads,
// diffs, files and merges come from git. Tests drive it through the methods of the returned peer.
// Given a git peer, it serves that peer's repositories: a branch pushed over git HTTP is a head
// here, and a merge done here is what the next clone sees.
import http from "node:http";
import type { AddressInfo } from "node:net";
import type { GitPeer } from "./git-server.ts";
import { BareRepositories } from "./git/bare-repos.ts";
import { errorBody, faultFailure, type Fault, HttpFailure, rateLimitHeaders, readJson, type Reply } from "./github/http.ts";
import { GithubModel } from "./github/model.ts";
import { routes, type RouteContext } from "./github/routes.ts";
import type { Site } from "./github/shapes.ts";
import type { Account, CheckRunState, IssueState, Permission, PullState, RepoState, ReviewState, StatusState } from "./github/state.ts";
import { nextId, now } from "./github/state.ts";

export type { Fault } from "./github/http.ts";

export interface LoggedRequest {
  method: string;
  /** Path and query, as the client sent them. */
  path: string;
  /** The token the request carried (undefined when it carried none) and whose it is. */
  token: string | undefined;
  login: string | undefined;
  /** The X-GitHub-Api-Version the request asked for, if any. */
  apiVersion: string | undefined;
  /** The JSON body of a write (POST, PUT, PATCH, DELETE) that reached a route. */
  body?: Record<string, unknown>;
  status: number;
}

interface Grant {
  account: Account;
  permission: Permission;
  /** Repositories (owner/name, lower case) the token reaches; undefined reaches every one. */
  repos: Set<string> | undefined;
}

interface PendingFault {
  fault: Fault;
  remaining: number;
  matches: (method: string, path: string) => boolean;
}

export interface GithubPeerOptions {
  /**
   * The git peer whose repositories this peer serves. Every token added here is also a git token
   * there, with the same read or write permission on the same repositories.
   */
  git?: GitPeer;
}

export interface GithubPeer {
  /** The API base URL to give Octokit as `baseUrl`. */
  baseUrl: string;
  log: LoggedRequest[];
  addToken(token: string, login: string, permission: Permission, repos?: string[]): void;
  addRepo(fullName: string, options?: { defaultBranch?: string; private?: boolean; files?: Record<string, string> }): Promise<RepoState>;
  /** Commits files (null deletes) on `branch`, branching from `from` (default branch) when it is new. */
  commit(fullName: string, branch: string, files: Record<string, string | null>, options?: { message?: string; from?: string }): Promise<string>;
  head(fullName: string, branch: string): Promise<string | undefined>;
  /** Moves `branch` to `sha` as a force-push would. */
  forcePush(fullName: string, branch: string, sha: string): Promise<void>;
  openPullRequest(fullName: string, fields: { head: string; base?: string; title?: string; body?: string; user: string; draft?: boolean }): Promise<number>;
  addIssue(fullName: string, fields: { title: string; body?: string; user: string; assignees?: string[]; labels?: string[] }): number;
  addComment(fullName: string, number: number, user: string, body: string): void;
  /** Registers a check run on the commit `ref` names; returns its id. */
  addCheckRun(fullName: string, ref: string, run: { name: string; status?: CheckRunState["status"]; conclusion?: CheckRunState["conclusion"] }): Promise<number>;
  /** Moves a check run on, as the CI system that owns it does (completed with a conclusion, by default success). */
  updateCheckRun(fullName: string, id: number, run: { status?: CheckRunState["status"]; conclusion?: CheckRunState["conclusion"] }): void;
  addStatus(fullName: string, ref: string, status: { context: string; state: StatusState["state"]; description?: string }): Promise<void>;
  addReview(fullName: string, number: number, review: { user: string; state: ReviewState["state"]; body?: string }): Promise<void>;
  setMergeable(fullName: string, number: number, mergeable: boolean): void;
  closePullRequest(fullName: string, number: number): Promise<void>;
  mergePullRequest(fullName: string, number: number, method?: "merge" | "squash" | "rebase"): Promise<string>;
  pullRequest(fullName: string, number: number): IssueState & { pull: PullState };
  /** The next `count` requests (matching `method` and `pathPattern` when given) fail with `fault`. */
  injectFault(fault: Fault, count: number, match?: { method?: string; pathPattern?: RegExp }): void;
  /** Drops every fault not yet taken. */
  clearFaults(): void;
  /**
   * Runs `action` once, just before the next request matching `match` is answered: someone else acting
   * between two requests of the client under test (a force-push between its CI check and its merge).
   */
  beforeNext(match: { method?: string; pathPattern?: RegExp }, action: () => Promise<void>): void;
  stop(): Promise<void>;
}

const WRITE_METHODS = new Set(["POST", "PUT", "PATCH", "DELETE"]);
const API_VERSIONS = new Set(["2022-11-28", "2026-03-10"]);

function tokenOf(header: string | undefined): string | undefined {
  return header?.match(/^(?:token|bearer)\s+(\S+)$/i)?.[1];
}

function send(res: http.ServerResponse, reply: Reply, rateHeaders: Record<string, string>): void {
  const text = typeof reply.body === "string" ? reply.body : JSON.stringify(reply.body);
  res.writeHead(reply.status, {
    "content-type": "application/json; charset=utf-8",
    "x-github-media-type": "github.v3; format=json",
    ...rateHeaders,
    ...reply.headers,
  });
  res.end(text);
}

export async function startGithubPeer(options: GithubPeerOptions = {}): Promise<GithubPeer> {
  const repositories = options.git?.repos ?? (await BareRepositories.create());
  const model = new GithubModel((fullName) => repositories.dirOf(fullName));
  const grants = new Map<string, Grant>();
  const used = new Map<string, number>();
  const faults: PendingFault[] = [];
  const interjections: { matches: (method: string, path: string) => boolean; action: () => Promise<void> }[] = [];
  const matcher = (match: { method?: string; pathPattern?: RegExp }) => (method: string, pathname: string) =>
    (!match.method || match.method === method) && (!match.pathPattern || match.pathPattern.test(pathname));
  const log: LoggedRequest[] = [];
  const site: Site = { api: "", web: "https://github.com" };

  function authorize(req: http.IncomingMessage, pathname: string): { token: string; grant: Grant } {
    const token = tokenOf(req.headers.authorization);
    const grant = token ? grants.get(token) : undefined;
    if (!token || !grant) throw new HttpFailure(401, token ? "Bad credentials" : "Requires authentication");
    const repoName = pathname.match(/^\/repos\/([^/]+\/[^/]+)/)?.[1]?.toLowerCase();
    if (repoName && grant.repos && !grant.repos.has(repoName)) throw new HttpFailure(404, "Not Found");
    if (WRITE_METHODS.has(req.method ?? "") && grant.permission !== "write") {
      throw new HttpFailure(403, "Resource not accessible by personal access token");
    }
    return { token, grant };
  }

  function takeFault(method: string, pathname: string): Fault | undefined {
    const pending = faults.find((f) => f.remaining > 0 && f.matches(method, pathname));
    if (!pending) return undefined;
    pending.remaining--;
    return pending.fault;
  }

  async function answer(req: http.IncomingMessage, url: URL, entry: LoggedRequest): Promise<Reply> {
    const method = req.method ?? "GET";
    const interjection = interjections.findIndex((i) => i.matches(method, url.pathname));
    if (interjection >= 0) await interjections.splice(interjection, 1)[0]!.action();
    const fault = takeFault(method, url.pathname);
    if (fault) throw faultFailure(fault);
    const { token, grant } = authorize(req, url.pathname);
    entry.token = token;
    entry.login = grant.account.login;
    if (entry.apiVersion !== undefined && !API_VERSIONS.has(entry.apiVersion)) {
      throw new HttpFailure(400, `Unsupported API version ${entry.apiVersion}: send one of ${[...API_VERSIONS].join(", ")}`);
    }
    // Octokit escapes the slashes of a ref parameter ("heads%2Fmain"); GitHub reads both spellings.
    const pathname = decodeURIComponent(url.pathname);
    for (const route of routes) {
      const match = route.method === method ? pathname.match(route.pattern) : null;
      if (!match) continue;
      const params = match.slice(1);
      if (WRITE_METHODS.has(method)) entry.body = await readJson(req);
      const ctx: RouteContext = {
        model, site, url, params, account: grant.account, accept: req.headers.accept ?? "",
        body: entry.body ?? {},
        repo: () => model.repo(`${params[0]}/${params[1]}`),
      };
      return route.handle(ctx);
    }
    throw new HttpFailure(404, "Not Found");
  }

  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? "/", site.api);
    const entry: LoggedRequest = {
      method: req.method ?? "GET", path: req.url ?? "/", token: tokenOf(req.headers.authorization), login: undefined,
      apiVersion: req.headers["x-github-api-version"] as string | undefined, status: 0,
    };
    log.push(entry);
    void answer(req, url, entry)
      .catch((error: unknown) => {
        const failure = error instanceof HttpFailure ? error : new HttpFailure(500, String(error));
        return { status: failure.status, body: errorBody(failure), headers: failure.headers };
      })
      .then((reply) => {
        entry.status = reply.status;
        const key = entry.token ?? "";
        used.set(key, (used.get(key) ?? 0) + 1);
        send(res, reply, rateLimitHeaders(used.get(key)!));
      });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  site.api = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const pullNumber = async (fullName: string, number: number) => model.pull(model.repo(fullName), number);
  const shaOf = (fullName: string, ref: string) => model.resolve(model.repo(fullName), ref);

  return {
    baseUrl: site.api,
    log,
    addToken(token, login, permission, repos) {
      grants.set(token, { account: model.grant(login, permission), permission, repos: repos && new Set(repos.map((r) => r.toLowerCase())) });
      options.git?.addToken(token, login, Object.fromEntries((repos ?? ["*"]).map((repo) => [repo, permission])));
    },
    addRepo: (fullName, options = {}) => model.addRepo(fullName, options),
    async commit(fullName, branch, files, options = {}) {
      const repo = model.repo(fullName);
      return repo.git.commit(branch, files, options.message ?? `Change ${branch}`, options.from ?? repo.defaultBranch);
    },
    head: (fullName, branch) => model.repo(fullName).git.head(branch),
    forcePush: (fullName, branch, sha) => model.repo(fullName).git.setHead(branch, sha),
    async openPullRequest(fullName, fields) {
      const repo = model.repo(fullName);
      const issue = await model.openPull(repo, { title: `Change ${fields.head}`, base: repo.defaultBranch, ...fields, user: model.account(fields.user) });
      return issue.number;
    },
    addIssue(fullName, fields) {
      const issue = model.addIssue(model.repo(fullName), {
        ...fields, user: model.account(fields.user), assignees: (fields.assignees ?? []).map((a) => model.account(a)),
      });
      return issue.number;
    },
    addComment(fullName, number, user, body) {
      model.issue(model.repo(fullName), number).comments.push({ id: nextId(), user: model.account(user), body, createdAt: now() });
    },
    async addCheckRun(fullName, ref, run) {
      return model.addCheckRun(model.repo(fullName), { ...run, headSha: await shaOf(fullName, ref) }).id;
    },
    updateCheckRun(fullName, id, run) {
      model.updateCheckRun(model.repo(fullName), id, run);
    },
    async addStatus(fullName, ref, status) {
      model.addStatus(model.repo(fullName), { ...status, sha: await shaOf(fullName, ref) });
    },
    async addReview(fullName, number, review) {
      const issue = await pullNumber(fullName, number);
      const { headSha } = await model.view(model.repo(fullName), issue);
      issue.pull.reviews.push({ id: nextId(), user: model.account(review.user), body: review.body ?? "", state: review.state, commitId: headSha, submittedAt: now(), comments: [] });
    },
    setMergeable(fullName, number, mergeable) {
      model.pull(model.repo(fullName), number).pull.mergeable = mergeable;
    },
    async closePullRequest(fullName, number) {
      await model.close(model.repo(fullName), await pullNumber(fullName, number));
    },
    async mergePullRequest(fullName, number, method = "merge") {
      const issue = await pullNumber(fullName, number);
      return (await model.merge(model.repo(fullName), issue, { method, user: issue.user })).sha;
    },
    pullRequest: (fullName, number) => model.pull(model.repo(fullName), number),
    injectFault(fault, count, match = {}) {
      faults.push({ fault, remaining: count, matches: matcher(match) });
    },
    clearFaults() {
      faults.length = 0;
    },
    beforeNext(match, action) {
      interjections.push({ matches: matcher(match), action });
    },
    async stop() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      // Shared repositories are the git peer's to remove.
      if (!options.git) await repositories.remove();
    },
  };
}
