import { OrkaError } from "../util/errors.ts";
import { codePointLength } from "../util/text.ts";
import type { Workspace } from "./task.ts";

const fail = (message: string): never => {
  throw new OrkaError("invalid_argument", message);
};

const REPO_HINT = "(Use a credential-free HTTPS URL such as https://github.com/owner/repo)";

/**
 * The canonical form of a repository URL: `git@github.com:o/r[.git]` and `https://github.com/o/r.git`
 * both become `https://github.com/o/r`; anything but credential-free HTTPS is refused.
 */
export function normalizeRepoURL(field: string, value: string): string {
  const ssh = /^git@([^:]+):(.+?)(\.git)?$/.exec(value.trim());
  if (ssh) return `https://${ssh[1]}/${ssh[2]}`;
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    return fail(`workspace.${field} is not a valid URL ${REPO_HINT}`);
  }
  if (url.protocol !== "https:") fail(`workspace.${field} must use https ${REPO_HINT}`);
  if (url.username || url.password) fail(`workspace.${field} must not contain credentials ${REPO_HINT}`);
  if (url.search || url.hash) fail(`workspace.${field} must not contain a query or fragment ${REPO_HINT}`);
  return url.toString().replace(/\/$/, "").replace(/\.git$/, "");
}

/** git check-ref-format, the parts that matter for names users type. */
export function refProblem(name: string): string | undefined {
  if (!name.trim()) return "it is empty";
  if (/[\s~^:?*[\\]|\.\.|@\{|\/\/|\.lock(\/|$)/.test(name)) return "it contains a character or sequence git does not allow";
  if (/^[/.]|[/.]$/.test(name)) return "it starts or ends with '/' or '.'";
  return undefined;
}

/**
 * `ref` names an exact commit, a tag, or a branch as `refs/heads/...`; the branch fields name a branch.
 * Other ref namespaces (`refs/remotes/...`, `refs/pull/...`) name something that moves under the Task.
 */
function checkRefName(field: "branch" | "ref" | "pushBranch" | "prBaseBranch", name: string): void {
  const namespaces = field === "ref" ? /^refs\/(heads|tags)\// : /^refs\/heads\//;
  const short = name.replace(namespaces, "");
  if (short.startsWith("refs/")) {
    fail(field === "ref"
      ? `workspace.ref must be an exact commit, a tag, or a refs/heads/... ref; "${name}" is in another ref namespace`
      : `workspace.${field} must be a branch name or a refs/heads/... ref; "${name}" is not a branch`);
  }
  const problem = refProblem(short);
  if (problem) fail(`workspace.${field} is invalid: ${problem}`);
}

/** One detector for secret-like text. */
const SECRET_LIKE = [
  /(github_pat_|ghp_|xoxb-|sk-)[A-Za-z0-9_./+=:-]{8,}/,
  /(AKIA|ASIA)[A-Z0-9]{16}/,
  /(api_key|access_token|refresh_token|id_token|auth_token|token|password|client_secret|private_key)\s*[:=]\s*\S{16,}/i,
  /eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}/,
  /-----begin |authorization: bearer|api_key=|apikey=|password=|client_secret=|private_key=|txn-token:/i,
  /[a-z][a-z0-9+.-]*:\/\/[^\s/@]+:[^\s/@]*@/i,
];

/** Pull request text limits in code points: the workspace's prTitle/prBody and create_pull_request's title/body. */
export const PULL_REQUEST_TEXT_LIMITS = { title: 256, body: 32_768 } as const;

/** Checks a Task workspace (repositories, refs, intent, credential roles, pull request text) and returns it normalized. */
export function validateWorkspace(input: Workspace): Workspace {
  const ws: Workspace = { ...input };
  if (ws.gitRepo !== undefined) ws.gitRepo = normalizeRepoURL("gitRepo", ws.gitRepo);
  if (ws.publicationGitRepo !== undefined) ws.publicationGitRepo = normalizeRepoURL("publicationGitRepo", ws.publicationGitRepo);
  if (ws.intent !== undefined) {
    const intent = ws.intent.trim().toLowerCase();
    if (intent !== "read" && intent !== "write") fail("workspace intent must be read or write");
    ws.intent = intent;
  }
  for (const field of ["branch", "ref", "readCredentialRef"] as const) {
    if (ws[field] !== undefined && !ws.gitRepo) fail(`workspace.${field} requires workspace.gitRepo`);
  }
  if (ws.branch && ws.ref) fail("set at most one of workspace.branch and workspace.ref");
  for (const field of ["branch", "ref", "pushBranch", "prBaseBranch"] as const) {
    if (ws[field] !== undefined) checkRefName(field, ws[field]!);
  }
  // Publication settings ask for write; an explicit read is a contradiction, not an upgrade.
  for (const field of ["publicationGitRepo", "pushBranch", "prBaseBranch", "createPR"] as const) {
    if (ws[field] === undefined || ws[field] === false) continue;
    if (ws.intent === "read") fail(`workspace.${field} requires write workspace intent`);
    ws.intent = "write";
  }
  // The forge credential is for the pull request API (reviews, comments, merges), which needs no push.
  for (const field of ["publicationReadCredentialRef", "publicationCredentialRef"] as const) {
    if (ws[field] !== undefined && ws.intent !== "write") fail(`workspace.${field} requires write workspace intent`);
  }
  checkCredentialKeys(ws);
  if (ws.intent === "write") {
    if (!ws.publicationCredentialRef) fail("workspace.publicationCredentialRef is required for write intent");
    if (!ws.gitRepo) fail("workspace.gitRepo is required for write intent");
  }
  if (ws.createPR) {
    for (const field of ["prBaseBranch", "forgeCredentialRef"] as const) if (!ws[field]) fail(`workspace.createPR requires workspace.${field}`);
  }
  const roles = ["readCredentialRef", "publicationReadCredentialRef", "publicationCredentialRef", "forgeCredentialRef"] as const;
  for (let i = 0; i < roles.length; i++) {
    for (let j = i + 1; j < roles.length; j++) {
      if (ws[roles[i]] && ws[roles[i]] === ws[roles[j]]) fail(`workspace.${roles[i]} and workspace.${roles[j]} must reference distinct Secrets`);
    }
  }
  checkPullRequestText(ws);
  return ws;
}

/** A credential key names the Secret key of its ref (default `token`): it needs the ref, and a name. */
function checkCredentialKeys(ws: Workspace): void {
  const keyed = [["readCredentialKey", "readCredentialRef"], ["forgeCredentialKey", "forgeCredentialRef"]] as const;
  for (const [keyField, refField] of keyed) {
    const key = ws[keyField];
    if (key === undefined) continue;
    if (!ws[refField]) fail(`workspace.${keyField} requires workspace.${refField}`);
    if (!key.trim()) fail(`workspace.${keyField} must name a key of the Secret, or be left out for "token"`);
    ws[keyField] = key.trim();
  }
}

/** Limits in code points, no whitespace-only title, no secrets, no publisher markers. */
function checkPullRequestText(ws: Workspace): void {
  if (ws.prTitle !== undefined) {
    if (codePointLength(ws.prTitle) > PULL_REQUEST_TEXT_LIMITS.title) fail(`workspace.prTitle exceeds ${PULL_REQUEST_TEXT_LIMITS.title} characters`);
    if (ws.prTitle.length > 0 && !ws.prTitle.trim()) fail("workspace.prTitle must not be whitespace-only");
  }
  if (ws.prBody !== undefined && codePointLength(ws.prBody) > PULL_REQUEST_TEXT_LIMITS.body) fail(`workspace.prBody exceeds ${PULL_REQUEST_TEXT_LIMITS.body} characters`);
  for (const field of ["prTitle", "prBody"] as const) {
    const text = ws[field];
    if (text && SECRET_LIKE.some((pattern) => pattern.test(text))) fail(`workspace.${field} appears to contain a secret or token`);
  }
  if (ws.prBody && /<!--\s*orka\.publisher\./i.test(ws.prBody)) fail("workspace.prBody must not contain reserved publisher reconciliation comments");
}
