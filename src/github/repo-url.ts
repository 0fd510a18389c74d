import { OrkaError } from "../util/errors.ts";

/** A GitHub repository: its web host (lower case), owner and name as written. */
export interface RepoRef {
  host: string;
  owner: string;
  repo: string;
}

const SEGMENT = /^[A-Za-z0-9._-]+$/;
const MAX_SHOWN_URL = 200;

/** An owner or repository name GitHub allows: letters, digits, `.`, `_`, `-`, and not `.` or `..`. */
export const validSegment = (segment: string | undefined): segment is string => !!segment && SEGMENT.test(segment) && segment !== "." && segment !== "..";

/** The URL as a message may show it: without any credentials in it, and bounded. */
function shown(url: string): string {
  const withoutCredentials = url.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/@\s]*@/i, "$1");
  return withoutCredentials.length > MAX_SHOWN_URL ? `${withoutCredentials.slice(0, MAX_SHOWN_URL)}…` : withoutCredentials;
}

/** owner and name from a path `o/r[.git][/…]`, or undefined when they are not plain segments. */
function ownerAndRepo(path: string): { owner: string; repo: string } | undefined {
  const [owner, name] = path.replace(/^\/+/, "").split("/");
  const repo = name?.replace(/\.git$/, "");
  return validSegment(owner) && validSegment(repo) ? { owner, repo } : undefined;
}

/** Splits `https://host/o/r…`, `http://host/o/r…` or `git@host:o/r[.git]` without judging the host. */
function splitRepoUrl(url: string): RepoRef | undefined {
  const text = url.trim();
  const ssh = /^git@([^:/\s]+):(.+)$/.exec(text);
  if (ssh) {
    const parts = /^[^/]+\/[^/]+$/.test(ssh[2]) ? ownerAndRepo(ssh[2]) : undefined;
    return parts && { host: ssh[1].toLowerCase(), ...parts };
  }
  let parsed: URL;
  try {
    parsed = new URL(text);
  } catch {
    return undefined;
  }
  if ((parsed.protocol !== "https:" && parsed.protocol !== "http:") || parsed.username || parsed.password) return undefined;
  const parts = ownerAndRepo(parsed.pathname);
  return parts && { host: parsed.hostname.toLowerCase(), ...parts };
}

/**
 * A repo_url a model gave: `https://<host>/<o>/<r>[.git][/…]`, `http://<host>/…` or `git@<host>:<o>/<r>[.git]`,
 * where host is github.com or the configured Enterprise host, and owner and name are plain segments.
 */
export function parseRepoUrl(url: string, webHosts: readonly string[]): RepoRef {
  const ref = splitRepoUrl(url);
  if (!ref || !webHosts.includes(ref.host)) throw new OrkaError("invalid_argument", `unsupported GitHub URL format: ${shown(url)}`);
  return ref;
}

/**
 * A repository the configuration names (a workspace repository, a transaction's `repo`): a URL as above, or
 * `host/o/r`, or `o/r` on github.com. Undefined when it names no repository these tools can reach.
 */
export function repoOfSetting(value: string): RepoRef | undefined {
  const text = value.trim();
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(text) || text.startsWith("git@")) return splitRepoUrl(text);
  const parts = text.replace(/\/+$/, "").split("/");
  if (parts.length === 2) return splitRepoUrl(`https://github.com/${text}`);
  if (parts.length === 3) return splitRepoUrl(`https://${text}`);
  return undefined;
}

export const fullName = (ref: RepoRef) => `${ref.owner}/${ref.repo}`;

/** GitHub compares repository names case-insensitively. */
export const sameRepo = (a: RepoRef, b: RepoRef) => a.host === b.host && fullName(a).toLowerCase() === fullName(b).toLowerCase();
