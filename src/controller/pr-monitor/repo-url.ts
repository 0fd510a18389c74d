import { validSegment } from "../../github/repo-url.ts";
import { ToolRefusal } from "../../tools/envelope.ts";

const EXAMPLE = "https://github.com/owner/repo";
const FORMS = `https://github.com/owner/repo, https://github.com/owner/repo.git or git@github.com:owner/repo.git`;

/** What a browser URL deeper than the repository root points at, by the path segment after owner/repo. */
const DEEPER_PAGES: { segments: readonly string[]; what: string }[] = [
  { segments: ["pull", "pulls"], what: "a pull request URL" },
  { segments: ["issues"], what: "an issue URL" },
  { segments: ["tree", "branches"], what: "a branch or tree URL" },
  { segments: ["blob", "raw", "blame"], what: "a file URL" },
  { segments: ["commit", "commits"], what: "a commit URL" },
];

const refuse = (message: string): never => {
  throw new ToolRefusal("invalid_arguments", `repo_url ${message}`, `call create_pr_monitor again with repo_url set to a repository root such as ${EXAMPLE}`);
};
const instead = (root: string | undefined) => (root ? `give ${root} instead` : `give a repository root such as ${EXAMPLE}`);

/**
 * The canonical `https://github.com/<owner>/<repo>` of a monitor's repository. Only the repository root
 * of github.com is accepted, so a URL copied from a browser (a pull request, a file, a branch) cannot
 * widen or blur what the monitor may touch. The URL itself is never echoed: it may hold a credential.
 */
export function monitorRepoURL(input: string): string {
  const raw = input.trim();
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/([^/?#]*)(.*)$/s.exec(raw);
  if (scheme) return fromURL(scheme[1].toLowerCase(), scheme[2], scheme[3]);
  const scp = /^(.*)@([^@:/]+):(.*)$/s.exec(raw);
  if (scp) return fromScp(scp[1], scp[2], scp[3]);
  return refuse(`is not a GitHub repository URL: give ${FORMS}`);
}

function fromURL(scheme: string, authority: string, rest: string): string {
  if (scheme !== "https" && scheme !== "http") refuse(`must not use ${scheme}://: give ${FORMS}`);
  if (authority.includes("@")) refuse(`must not contain credentials: give the plain repository URL, such as ${EXAMPLE}, and name the Secret that holds the token with gitSecretRef`);
  const root = rootOf(rest.replace(/[?#].*$/s, ""));
  if (authority.toLowerCase() !== "github.com") refuse(`must be a github.com repository (PR monitors support no other host): give ${FORMS}`);
  if (scheme === "http") refuse(`must use https://, not http://: ${instead(root)}`);
  if (/[?#]/.test(rest)) refuse(`must not contain a query string or a fragment: ${instead(root)}`);
  return repositoryRoot(rest.replace(/^\//, "").replace(/\/$/, "").split("/"), root);
}

function fromScp(user: string, host: string, path: string): string {
  if (user !== "git") refuse(`must not contain credentials: give git@github.com:owner/repo.git or ${EXAMPLE}, and name the Secret that holds the token with gitSecretRef`);
  if (host.toLowerCase() !== "github.com") refuse(`must be a github.com repository (PR monitors support no other host): give ${FORMS}`);
  if (/[?#]/.test(path)) refuse(`must not contain a query string or a fragment: ${instead(rootOf(path.replace(/[?#].*$/s, "")))}`);
  return repositoryRoot(path.split("/"), rootOf(path));
}

/** The repository root a path starts with, to suggest in a refusal, when its first two segments make one. */
function rootOf(path: string): string | undefined {
  const [owner, repo] = path.replace(/^\//, "").split("/");
  const name = repo?.replace(/\.git$/, "");
  return owner && name && validSegment(owner) && validSegment(name) ? `https://github.com/${owner}/${name}` : undefined;
}

/** Exactly `<owner>/<repo>` (with an optional `.git`): anything deeper is named by what it points at. */
function repositoryRoot(segments: string[], root: string | undefined): string {
  if (segments.length > 2) {
    const page = DEEPER_PAGES.find((candidate) => candidate.segments.includes(segments[2].toLowerCase()));
    const what = page?.what ?? "a page inside the repository";
    refuse(`is ${what}, not a repository root (a monitor reviews every open pull request of the repository): ${instead(root)}`);
  }
  const [owner = "", repoWithSuffix = ""] = segments;
  const repo = repoWithSuffix.replace(/\.git$/, "");
  if (!owner || !repoWithSuffix) refuse(`must name an owner and a repository: ${instead(undefined)}`);
  if (!validSegment(owner) || !validSegment(repo)) {
    refuse(`must name the owner and repository with letters, digits, '.', '_' or '-' only (not '.' or '..'): ${instead(undefined)}`);
  }
  return `https://github.com/${owner}/${repo}`;
}
