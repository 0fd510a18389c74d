import { describe, expect, it } from "vitest";
import { monitorRepoURL } from "../../src/controller/pr-monitor/repo-url.ts";
import { ToolRefusal } from "../../src/tools/envelope.ts";

const refusal = (url: string) => {
  try {
    monitorRepoURL(url);
  } catch (err) {
    expect(err).toBeInstanceOf(ToolRefusal);
    return (err as ToolRefusal).message;
  }
  throw new Error(`${url} was accepted`);
};

// The monitor's repository is a github.com repository root and nothing else: what a model copies from a
// browser (a pull request, a file, a branch) is refused with the root to give instead.
describe("a PR monitor's repository URL", () => {
  it.each([
    ["https://github.com/o/r", "https://github.com/o/r"],
    ["https://github.com/o/r.git", "https://github.com/o/r"],
    ["https://github.com/o/r/", "https://github.com/o/r"],
    ["https://github.com/o/r.git/", "https://github.com/o/r"],
    ["git@github.com:o/r.git", "https://github.com/o/r"],
    ["git@github.com:o/r", "https://github.com/o/r"],
    [" HTTPS://GitHub.com/Acme-Corp/my_repo.v2.git ", "https://github.com/Acme-Corp/my_repo.v2"],
    ["git@GITHUB.COM:a.b/c-d", "https://github.com/a.b/c-d"],
  ])("takes %s as %s", (url, canonical) => {
    expect(monitorRepoURL(url)).toBe(canonical);
  });

  it.each([
    ["https://github.com/o/r/pull/1", /^repo_url is a pull request URL, .*: give https:\/\/github.com\/o\/r instead$/],
    ["https://github.com/o/r/pulls", /^repo_url is a pull request URL/],
    ["https://github.com/o/r/issues/2", /^repo_url is an issue URL/],
    ["https://github.com/o/r/tree/feature/x", /^repo_url is a branch or tree URL/],
    ["https://github.com/o/r/blob/main/src/a.ts", /^repo_url is a file URL/],
    ["https://github.com/o/r/raw/main/a", /^repo_url is a file URL/],
    ["https://github.com/o/r/commit/abc123", /^repo_url is a commit URL/],
    ["https://github.com/o/r/actions", /^repo_url is a page inside the repository/],
    ["https://github.com/o/r?tab=readme", /query string or a fragment: give https:\/\/github.com\/o\/r instead$/],
    ["https://github.com/o/r?", /query string or a fragment/],
    ["https://github.com/o/r#", /query string or a fragment/],
    ["git@github.com:o/r.git#x", /query string or a fragment/],
    ["http://github.com/o/r", "repo_url must use https://, not http://: give https://github.com/o/r instead"],
    ["https://gitlab.com/o/r", /^repo_url must be a github.com repository/],
    ["https://github.com.evil.example/o/r", /^repo_url must be a github.com repository/],
    ["https://github.com:8443/o/r", /^repo_url must be a github.com repository/],
    ["https://github.com\\o\\r", /^repo_url must be a github.com repository/],
    ["git@gitlab.com:o/r.git", /^repo_url must be a github.com repository/],
    ["https://user:pass@github.com/o/r", /^repo_url must not contain credentials/],
    ["https://@github.com/o/r", /^repo_url must not contain credentials/],
    ["token123@github.com:o/r.git", /^repo_url must not contain credentials/],
    ["ssh://git@github.com/o/r.git", /^repo_url must not use ssh:\/\//],
    ["file:///etc/passwd", /^repo_url must not use file:\/\//],
    ["github.com/o/r", /^repo_url is not a GitHub repository URL/],
    ["", /^repo_url is not a GitHub repository URL/],
    ["https://github.com/o", /^repo_url must name an owner and a repository/],
    ["https://github.com/", /^repo_url must name an owner and a repository/],
    ["https://github.com/o/.git", /letters, digits, '\.', '_' or '-' only/],
    ["https://github.com/../r", /letters, digits/],
    ["https://github.com/o/..", /letters, digits/],
    ["https://github.com/./r", /letters, digits/],
    ["https://github.com/o/r%2F..", /letters, digits/],
    ["https://github.com/o/r x", /letters, digits/],
    ["https://github.com//o/r", /^repo_url is a page inside the repository/],
  ])("refuses %s", (url, message) => {
    if (typeof message === "string") expect(refusal(url)).toBe(message);
    else expect(refusal(url)).toMatch(message);
  });

  it("never echoes what it refuses: a URL may carry a token", () => {
    for (const url of ["https://x-access-token:ghp_abcdefghijklmnopqrstuv@github.com/o/r", "https://github.com/o/r?access_token=ghp_abcdefghijklmnopqrstuv", "ghp_abcdefghijklmnopqrstuv@github.com:o/r"]) {
      expect(refusal(url)).not.toContain("ghp_");
    }
  });
});
