import { describe, expect, it } from "vitest";
import { validateWorkspace } from "../../src/resources/workspace.ts";

const repo = "https://github.com/o/r";
const write = { gitRepo: repo, intent: "write", publicationCredentialRef: "push" };

// Task workspaces: every refusal has its message, and nothing is accepted half-checked.
describe("workspace validation", () => {
  it("normalizes ssh repos and upgrades an omitted intent when publication is asked for", () => {
    expect(validateWorkspace({ gitRepo: "git@github.com:o/r.git" }).gitRepo).toBe(repo);
    expect(validateWorkspace({ gitRepo: "https://github.com/o/r.git" }).gitRepo).toBe(repo);
    expect(validateWorkspace({ gitRepo: "https://github.com/o/r.git/" }).gitRepo).toBe(repo);
    expect(validateWorkspace({ ...write, publicationGitRepo: "https://github.com/o/fork.git" }).publicationGitRepo).toBe("https://github.com/o/fork");
    expect(validateWorkspace({ gitRepo: repo, publicationCredentialRef: "push", pushBranch: "feature/x" }).intent).toBe("write");
    expect(validateWorkspace({ gitRepo: repo, intent: " Read " }).intent).toBe("read");
    expect(validateWorkspace({ ...write, prTitle: "🚀".repeat(256) }).prTitle).toHaveLength(512);
  });

  it("takes a forge credential without write intent: the pull request API needs no push", () => {
    const workspace = validateWorkspace({ gitRepo: repo, readCredentialRef: "read", forgeCredentialRef: "forge", forgeCredentialKey: " GITHUB_TOKEN " });
    expect(workspace).toEqual({ gitRepo: repo, readCredentialRef: "read", forgeCredentialRef: "forge", forgeCredentialKey: "GITHUB_TOKEN" });
    expect(validateWorkspace({ gitRepo: repo, intent: "read", forgeCredentialRef: "forge" }).intent).toBe("read");
  });

  it.each(["0123456789abcdef0123456789abcdef01234567", "a".repeat(64), "v1.2.0", "refs/tags/v1.2.0", "refs/heads/main", "refs/heads/feature/x"])(
    "takes the ref %s: an exact commit, a tag, or a refs/heads/... ref",
    (ref) => {
      expect(validateWorkspace({ gitRepo: repo, ref }).ref).toBe(ref);
    },
  );

  it.each([
    [{ gitRepo: repo, ref: "refs/remotes/origin/main" }, 'workspace.ref must be an exact commit, a tag, or a refs/heads/... ref; "refs/remotes/origin/main" is in another ref namespace'],
    [{ gitRepo: repo, ref: "refs/pull/7/head" }, 'workspace.ref must be an exact commit, a tag, or a refs/heads/... ref; "refs/pull/7/head" is in another ref namespace'],
    [{ gitRepo: repo, branch: "refs/tags/v1" }, 'workspace.branch must be a branch name or a refs/heads/... ref; "refs/tags/v1" is not a branch'],
    [{ gitRepo: "http://github.com/o/r" }, "workspace.gitRepo must use https"],
    [{ gitRepo: "https://u:p@github.com/o/r" }, "workspace.gitRepo must not contain credentials"],
    [{ gitRepo: `${repo}?x=1` }, "workspace.gitRepo must not contain a query or fragment"],
    [{ branch: "main" }, "workspace.branch requires workspace.gitRepo"],
    [{ gitRepo: repo, intent: "admin" }, "workspace intent must be read or write"],
    [{ gitRepo: repo, branch: "bad..name" }, "workspace.branch is invalid: it contains a character or sequence git does not allow"],
    [{ gitRepo: repo, intent: "read", pushBranch: "x" }, "workspace.pushBranch requires write workspace intent"],
    [{ gitRepo: repo, publicationReadCredentialRef: "verify" }, "workspace.publicationReadCredentialRef requires write workspace intent"],
    [{ gitRepo: repo, readCredentialKey: "password" }, "workspace.readCredentialKey requires workspace.readCredentialRef"],
    [{ gitRepo: repo, readCredentialRef: "read", forgeCredentialKey: "token" }, "workspace.forgeCredentialKey requires workspace.forgeCredentialRef"],
    [{ gitRepo: repo, readCredentialRef: "read", readCredentialKey: "  " }, 'workspace.readCredentialKey must name a key of the Secret, or be left out for "token"'],
    [{ gitRepo: repo, readCredentialRef: "same", forgeCredentialRef: "same" }, "workspace.readCredentialRef and workspace.forgeCredentialRef must reference distinct Secrets"],
    [{ gitRepo: repo, intent: "write" }, "workspace.publicationCredentialRef is required for write intent"],
    [{ publicationCredentialRef: "push", intent: "write" }, "workspace.gitRepo is required for write intent"],
    [{ ...write, createPR: true }, "workspace.createPR requires workspace.prBaseBranch"],
    [{ ...write, createPR: true, prBaseBranch: "main" }, "workspace.createPR requires workspace.forgeCredentialRef"],
    [{ ...write, readCredentialRef: "push" }, "workspace.readCredentialRef and workspace.publicationCredentialRef must reference distinct Secrets"],
    [{ ...write, prTitle: "x".repeat(257) }, "workspace.prTitle exceeds 256 characters"],
    [{ ...write, prTitle: "   " }, "workspace.prTitle must not be whitespace-only"],
    [{ ...write, prBody: "fixes it, ghp_abcdefghijklmnop1234" }, "workspace.prBody appears to contain a secret or token"],
    [{ ...write, prBody: "done <!-- orka.publisher.pr-intent.v1 key=x -->" }, "workspace.prBody must not contain reserved publisher reconciliation comments"],
  ])("refuses %j", (workspace, message) => {
    expect(() => validateWorkspace(workspace)).toThrow(message);
  });
});
