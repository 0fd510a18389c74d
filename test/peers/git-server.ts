// A real git server for tests: git's own CGI (`git http-backend`, smart HTTP) behind a small Node
// front on 127.0.0.1 that checks Basic auth per token, so clones, pushes and their refusals are
// git's own. Repositories are served as /<owner>/<repo>.git (the `.git` may be left off).
import { spawn, type ChildProcess } from "node:child_process";
import { writeFile } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { BareRepositories, type CommitOptions, type SeedOptions } from "./git/bare-repos.ts";
import { isolatedGitEnv } from "./git/run-git.ts";

export type GitPermission = "read" | "write";
export type GitService = "git-upload-pack" | "git-receive-pack";

export interface GitRequestRecord {
  method: string;
  path: string;
  /** `owner/repo`, lower case, when the path names one. */
  repo?: string;
  service?: GitService;
  /** The identity of the token the request carried; "anonymous" without credentials, "unknown" for a token the peer does not know. */
  identity: string;
  status: number;
}

export interface GitPeerOptions {
  /** The largest request body accepted (a push's pack); larger ones get 413 and the CGI is stopped. */
  maxBodyBytes?: number;
  /** A CGI run that takes longer is stopped and the request fails. */
  requestTimeoutMs?: number;
}

export interface GitPeer {
  /** http://127.0.0.1:<port>, with no trailing slash. */
  url: string;
  /** Every request in arrival order. */
  requests: GitRequestRecord[];
  repos: BareRepositories;
  /**
   * A token named `identity` in logs, with read or write access to the given `owner/repo`s, or to
   * every repository under the key `*` (replaces an earlier grant of the same token).
   */
  addToken(token: string, identity: string, grants: Record<string, GitPermission>): void;
  createRepo(fullName: string, seed?: SeedOptions): Promise<void>;
  refSha(fullName: string, ref: string): Promise<string | undefined>;
  commit(fullName: string, branch: string, options: CommitOptions): Promise<string>;
  /** Process ids of the CGI runs still going; each leads a process group holding its git children. */
  runningBackends(): number[];
  /**
   * A file for GIT_CONFIG_GLOBAL that holds only `url.<this peer>/.insteadOf https://github.com/`, for
   * code under test that builds its git environment itself.
   */
  clientConfigFile: string;
  /**
   * The environment for a git client that reaches this peer as https://github.com/<owner>/<repo>
   * and, given a token, sends it as a header from the environment: nothing lands in `.git/config`.
   * The header takes GIT_CONFIG_COUNT's first entry; a caller adding its own continues from index 1.
   */
  clientEnv(token?: string): NodeJS.ProcessEnv;
  close(): Promise<void>;
}

interface Token {
  identity: string;
  grants: Map<string, GitPermission>;
}

interface Route {
  repo: string;
  /** What follows the repository in the path: `info/refs`, `git-upload-pack` or `git-receive-pack`. */
  rest: string;
  service?: GitService;
}

const SMART_PATH = /^\/([^/]+\/[^/]+?)(?:\.git)?\/(info\/refs|git-upload-pack|git-receive-pack)$/;
const SERVICES: readonly string[] = ["git-upload-pack", "git-receive-pack"];
/** The grant key that reaches every repository. */
const EVERY_REPOSITORY = "*";

export async function startGitPeer(options: GitPeerOptions = {}): Promise<GitPeer> {
  const maxBodyBytes = options.maxBodyBytes ?? 64 * 1024 * 1024;
  const requestTimeoutMs = options.requestTimeoutMs ?? 60_000;
  const repos = await BareRepositories.create();
  const tokens = new Map<string, Token>();
  const requests: GitRequestRecord[] = [];
  const backends = new Set<ChildProcess>();
  const clientConfig = path.join(repos.root, "client.gitconfig");

  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://peer");
    const record: GitRequestRecord = { method: req.method ?? "GET", path: url.pathname, identity: "anonymous", status: 0 };
    requests.push(record);
    res.on("finish", () => (record.status = res.statusCode));
    const refuse = (status: number, message: string, headers: http.OutgoingHttpHeaders = {}) => {
      record.status = status;
      res.writeHead(status, { "content-type": "text/plain", ...headers }).end(`${message}\n`);
      req.resume();
    };

    const route = routeOf(url);
    if (!route) return refuse(404, "Not found: this peer serves only smart HTTP (info/refs, git-upload-pack, git-receive-pack)");
    record.repo = route.repo;
    record.service = route.service;
    if (!route.service) return refuse(403, "Only the smart HTTP services are served");

    const presented = tokenOf(req.headers.authorization);
    const token = presented === undefined ? undefined : tokens.get(presented);
    if (presented !== undefined) record.identity = token?.identity ?? "unknown";
    if (!token) return refuse(401, "Authentication required", { "www-authenticate": 'Basic realm="orka-git-peer"' });
    const permission = token.grants.get(route.repo) ?? token.grants.get(EVERY_REPOSITORY);
    // As on GitHub, a repository the token may not read does not exist for it.
    if (!permission) return refuse(404, `Repository ${route.repo} not found`);
    if (route.service === "git-receive-pack" && permission !== "write") {
      return refuse(403, `Permission to ${route.repo}.git denied to ${token.identity}`);
    }
    if (Number(req.headers["content-length"] ?? 0) > maxBodyBytes) return refuse(413, `Request body over ${maxBodyBytes} bytes`, { connection: "close" });
    void repos.exists(route.repo).then(
      (exists) => (exists ? runBackend(req, res, route, token.identity, permission) : refuse(404, `Repository ${route.repo} not found`)),
      () => refuse(404, `"${route.repo}" is not an owner/repo name`),
    );
  });

  function runBackend(req: http.IncomingMessage, res: http.ServerResponse, route: Route, identity: string, permission: GitPermission): void {
    const url = new URL(req.url ?? "/", "http://peer");
    const env = isolatedGitEnv({
      GIT_PROJECT_ROOT: repos.root,
      GIT_HTTP_EXPORT_ALL: "1",
      PATH_INFO: `/${route.repo}.git/${route.rest}`,
      REQUEST_METHOD: req.method,
      QUERY_STRING: url.search.slice(1),
      CONTENT_TYPE: req.headers["content-type"] ?? "",
      REMOTE_USER: identity,
      REMOTE_ADDR: req.socket.remoteAddress ?? "127.0.0.1",
      // Read by http-backend itself: it inflates a gzip body and passes the protocol version on.
      ...(req.headers["content-encoding"] ? { HTTP_CONTENT_ENCODING: req.headers["content-encoding"] } : {}),
      ...(req.headers["git-protocol"] ? { HTTP_GIT_PROTOCOL: String(req.headers["git-protocol"]) } : {}),
      // Without CONTENT_LENGTH (a chunked push) http-backend reads the body to its end.
      ...(req.headers["content-length"] ? { CONTENT_LENGTH: req.headers["content-length"] } : {}),
      GIT_CONFIG_COUNT: "1",
      GIT_CONFIG_KEY_0: "http.receivepack",
      GIT_CONFIG_VALUE_0: permission === "write" ? "true" : "false",
    });
    // Its own process group: http-backend runs upload-pack / receive-pack as children that hold
    // the pipes open, so stopping a run means stopping the group its id leads.
    const child = spawn("git", ["http-backend"], { env, stdio: ["pipe", "pipe", "pipe"], detached: true });
    backends.add(child);
    const stop = () => {
      child.stdin.destroy();
      killGroup(child);
    };
    const deadline = setTimeout(stop, requestTimeoutMs);
    child.on("close", () => {
      clearTimeout(deadline);
      backends.delete(child);
      if (!res.headersSent) res.writeHead(502, { "content-type": "text/plain" }).end("git http-backend ended without an answer\n");
      else res.end();
    });
    child.on("error", stop);
    // A client that goes away takes its CGI run with it.
    res.on("close", () => {
      if (!res.writableFinished) stop();
    });
    child.stderr.resume();
    child.stdin.on("error", () => undefined);

    let received = 0;
    req.on("data", (chunk: Buffer) => {
      received += chunk.length;
      if (received > maxBodyBytes) {
        req.pause();
        stop();
        if (!res.headersSent) res.writeHead(413, { "content-type": "text/plain", connection: "close" }).end(`Request body over ${maxBodyBytes} bytes\n`);
        return;
      }
      if (!child.stdin.write(chunk)) {
        req.pause();
        child.stdin.once("drain", () => req.resume());
      }
    });
    req.on("end", () => child.stdin.end());
    forwardCgiResponse(child, res);
  }

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const peerUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  await writeFile(clientConfig, `[url "${peerUrl}/"]\n\tinsteadOf = https://github.com/\n`);

  return {
    url: peerUrl,
    requests,
    repos,
    clientConfigFile: clientConfig,
    addToken(token, identity, grants) {
      tokens.set(token, { identity, grants: new Map(Object.entries(grants).map(([repo, permission]) => [repo.replace(/\.git$/, "").toLowerCase(), permission])) });
    },
    createRepo: (fullName, seed) => repos.createRepo(fullName, seed),
    refSha: (fullName, ref) => repos.refSha(fullName, ref),
    commit: (fullName, branch, commitOptions) => repos.commit(fullName, branch, commitOptions),
    runningBackends: () => [...backends].flatMap((child) => (child.pid === undefined ? [] : [child.pid])),
    clientEnv(token) {
      const header = token === undefined ? {} : { GIT_CONFIG_COUNT: "1", GIT_CONFIG_KEY_0: `http.${peerUrl}/.extraHeader`, GIT_CONFIG_VALUE_0: `Authorization: ${basicAuth(token)}` };
      return isolatedGitEnv({ GIT_CONFIG_GLOBAL: clientConfig, ...header });
    },
    async close() {
      for (const child of backends) killGroup(child);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await repos.remove();
    },
  };
}

function killGroup(child: ChildProcess): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, "SIGKILL");
  } catch {
    // The group has already gone.
  }
}

/** The Authorization header git sends for a GitHub-style token. */
export function basicAuth(token: string, username = "x-access-token"): string {
  return `Basic ${Buffer.from(`${username}:${token}`).toString("base64")}`;
}

function routeOf(url: URL): Route | undefined {
  const match = SMART_PATH.exec(url.pathname);
  if (!match) return undefined;
  const [, repo, rest] = match;
  const service = rest === "info/refs" ? url.searchParams.get("service") : rest;
  return { repo: repo.toLowerCase(), rest, service: service && SERVICES.includes(service) ? (service as GitService) : undefined };
}

/** The password of a Basic credential (any username, GitHub's `x-access-token` included), if one came. */
function tokenOf(authorization: string | undefined): string | undefined {
  const match = /^Basic\s+(\S+)$/i.exec(authorization ?? "");
  if (!match) return undefined;
  const decoded = Buffer.from(match[1], "base64").toString("utf8");
  const colon = decoded.indexOf(":");
  return colon < 0 ? undefined : decoded.slice(colon + 1);
}

/** Reads the CGI's headers (`Status:` and the rest, up to a blank line), then streams the body out. */
function forwardCgiResponse(child: ChildProcess, res: http.ServerResponse): void {
  const stdout = child.stdout!;
  let head = Buffer.alloc(0);
  stdout.on("data", (chunk: Buffer) => {
    if (res.headersSent) return writeWithBackpressure(chunk);
    head = Buffer.concat([head, chunk]);
    const end = headerEnd(head);
    if (!end) return;
    const { status, headers } = parseCgiHeaders(head.subarray(0, end.at).toString("latin1"));
    res.writeHead(status, headers);
    writeWithBackpressure(head.subarray(end.at + end.length));
  });
  function writeWithBackpressure(chunk: Buffer): void {
    if (chunk.length > 0 && !res.write(chunk)) {
      stdout.pause();
      res.once("drain", () => stdout.resume());
    }
  }
}

function headerEnd(buffer: Buffer): { at: number; length: number } | undefined {
  const crlf = buffer.indexOf("\r\n\r\n");
  const lf = buffer.indexOf("\n\n");
  if (crlf >= 0 && (lf < 0 || crlf <= lf)) return { at: crlf, length: 4 };
  return lf >= 0 ? { at: lf, length: 2 } : undefined;
}

function parseCgiHeaders(text: string): { status: number; headers: Record<string, string> } {
  let status = 200;
  const headers: Record<string, string> = {};
  for (const line of text.split(/\r?\n/)) {
    const colon = line.indexOf(":");
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim();
    const value = line.slice(colon + 1).trim();
    if (name.toLowerCase() === "status") status = Number.parseInt(value, 10) || 500;
    else headers[name] = value;
  }
  return { status, headers };
}
