import { OrkaError } from "../util/errors.ts";
import { credentialRefused, lastLines, runGit, type GitSettings } from "./git.ts";

const FULL_SHA = /^([0-9a-f]{40}|[0-9a-f]{64})$/;

/** A repository Orka reads or writes, with the token for that role (none for a public one). */
export interface Remote {
  url: string;
  credential?: string;
}

/** Why a remote could not be read: the credential was refused, or something else. */
export class RemoteReadError extends OrkaError {
  readonly credentialRefused: boolean;

  constructor(message: string, refused: boolean) {
    super(refused ? "permission_denied" : "unavailable", message);
    this.credentialRefused = refused;
  }
}

/** What `git ls-remote` printed: one "<sha>\t<ref>" line per ref (and "ref: <target>\t<ref>" with --symref). */
async function lsRemoteText(settings: GitSettings, remote: Remote, patterns: string[], flags: string[] = []): Promise<string> {
  const run = await runGit(settings, ["ls-remote", ...flags, remote.url, ...patterns], { credential: remote.credential, maxOutputBytes: 8 * 1024 * 1024 });
  if (run.code === 0) return run.stdout;
  const refused = credentialRefused(run.stderr);
  const hint = refused ? " (the credential was refused or is missing: check the Secret the workspace names for this role)" : "";
  throw new RemoteReadError(`could not read ${remote.url}${hint}: ${lastLines(run.stderr)}`, refused);
}

/** The named refs with their commits (a peeled tag as `<tag>^{}`). */
async function lsRemote(settings: GitSettings, remote: Remote, refs: string[]): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  for (const line of (await lsRemoteText(settings, remote, refs)).split("\n")) {
    const match = /^([0-9a-f]{40,64})\t(\S+)$/.exec(line);
    if (match) found.set(match[2], match[1]);
  }
  return found;
}

/** The commit a branch is at on the remote, or undefined when it has no such branch. */
export async function remoteBranchSHA(settings: GitSettings, remote: Remote, branch: string): Promise<string | undefined> {
  const ref = `refs/heads/${branch}`;
  return (await lsRemote(settings, remote, [ref])).get(ref);
}

export interface ResolvedRef {
  /** The branch checked out, when there is one (named, or the default branch). */
  branch?: string;
  baseSHA: string;
}

/**
 * The commit a workspace starts from: a branch's head, an exact commit, a tag's commit, or, with
 * neither branch nor ref, the default branch (read from the remote's HEAD).
 */
export async function resolveRef(settings: GitSettings, remote: Remote, wanted: { branch?: string; ref?: string }): Promise<ResolvedRef> {
  if (wanted.ref && FULL_SHA.test(wanted.ref)) return { baseSHA: wanted.ref };
  if (wanted.branch) {
    const branch = wanted.branch.replace(/^refs\/heads\//, "");
    const sha = await remoteBranchSHA(settings, remote, branch);
    if (!sha) throw new OrkaError("failed_precondition", `branch "${branch}" does not exist in ${remote.url}`);
    return { branch, baseSHA: sha };
  }
  if (wanted.ref) return resolveNamedRef(settings, remote, wanted.ref);
  const head = await lsRemoteText(settings, remote, ["HEAD"], ["--symref"]);
  const branch = /^ref: refs\/heads\/(\S+)\tHEAD$/m.exec(head)?.[1];
  const sha = /^([0-9a-f]{40,64})\tHEAD$/m.exec(head)?.[1];
  if (!branch || !sha) throw new OrkaError("failed_precondition", `${remote.url} has no default branch (is it empty?); name a branch or ref in the workspace`);
  return { branch, baseSHA: sha };
}

/** `refs/heads/x`, `refs/tags/x` or a short name (a branch first, then a tag); a tag resolves to its commit. */
async function resolveNamedRef(settings: GitSettings, remote: Remote, ref: string): Promise<ResolvedRef> {
  const candidates = ref.startsWith("refs/") ? [ref] : [`refs/heads/${ref}`, `refs/tags/${ref}`];
  const refs = await lsRemote(settings, remote, candidates.flatMap((c) => [c, `${c}^{}`]));
  for (const candidate of candidates) {
    const sha = refs.get(`${candidate}^{}`) ?? refs.get(candidate);
    if (!sha) continue;
    return candidate.startsWith("refs/heads/") ? { branch: candidate.slice("refs/heads/".length), baseSHA: sha } : { baseSHA: sha };
  }
  throw new OrkaError("failed_precondition", `ref "${ref}" does not exist in ${remote.url}`);
}
