import { describe, expect, it } from "vitest";
import { parseRepoUrl, repoOfSetting, sameRepo } from "../../src/github/repo-url.ts";
import { githubSettings } from "../../src/github/settings.ts";

const HOSTS = ["github.com"];

describe("repo_url parsing", () => {
  it.each([
    ["https://github.com/acme/widgets", "acme/widgets"],
    ["https://github.com/acme/widgets.git", "acme/widgets"],
    ["https://github.com/acme/widgets/pull/12", "acme/widgets"],
    ["http://github.com/acme/widgets/", "acme/widgets"],
    ["git@github.com:acme/widgets.git", "acme/widgets"],
    ["git@github.com:Acme/my.repo_x-1", "Acme/my.repo_x-1"],
    ["  https://GitHub.com/acme/widgets  ", "acme/widgets"],
  ])("reads %s", (url, name) => {
    const ref = parseRepoUrl(url, HOSTS);
    expect(`${ref.owner}/${ref.repo}`).toBe(name);
    expect(ref.host).toBe("github.com");
  });

  it.each([
    "https://gitlab.com/acme/widgets",
    "ftp://github.com/acme/widgets",
    "https://github.com/acme",
    "https://github.com/../widgets",
    "https://github.com/acme/..",
    "https://github.com/acme%2Fx/widgets",
    "git@github.com:acme/widgets/extra",
    "acme/widgets",
    "",
  ])("refuses %j", (url) => {
    expect(() => parseRepoUrl(url, HOSTS)).toThrow(`unsupported GitHub URL format: ${url}`);
  });

  it("never repeats credentials from a refused URL", () => {
    expect(() => parseRepoUrl("https://x-access-token:ghp_secret123@github.com/acme/widgets", HOSTS)).toThrow(
      /^unsupported GitHub URL format: https:\/\/github\.com\/acme\/widgets$/,
    );
  });

  it("accepts the Enterprise host the API base URL names, and only that one besides github.com", () => {
    const settings = githubSettings({ apiBaseUrl: "https://ghe.example.com/api/v3" });
    expect(settings.webHosts).toEqual(["github.com", "ghe.example.com"]);
    expect(parseRepoUrl("https://ghe.example.com/team/app", settings.webHosts)).toEqual({ host: "ghe.example.com", owner: "team", repo: "app" });
    expect(() => parseRepoUrl("https://other.example.com/team/app", settings.webHosts)).toThrow("unsupported GitHub URL format");
    expect(githubSettings({}).webHosts).toEqual(["github.com"]);
  });

  it("reads configured repositories in any of their forms and compares them case-insensitively", () => {
    const canonical = parseRepoUrl("https://github.com/acme/widgets", HOSTS);
    for (const value of ["acme/widgets", "github.com/ACME/widgets", "https://github.com/acme/Widgets.git", "git@github.com:acme/widgets"]) {
      expect(sameRepo(repoOfSetting(value)!, canonical)).toBe(true);
    }
    expect(sameRepo(repoOfSetting("gitlab.com/acme/widgets")!, canonical)).toBe(false);
    expect(repoOfSetting("not a repo")).toBeUndefined();
  });
});
