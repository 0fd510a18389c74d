import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runToolCalls } from "../helpers/github-tasks.ts";
import type { OrkaUnderTest } from "../helpers/orka-server.ts";
import { startOrkaWithPeer } from "../helpers/orka-with-peer.ts";
import { startGithubPeer, type GithubPeer } from "../peers/github-server.ts";
import type { LlmPeer } from "../peers/llm-server.ts";

const REPO = "acme/widgets";
const WORKSPACE = { gitRepo: "https://github.com/acme/widgets", readCredentialRef: "gh-read" };

// The pull request read tools through a real server: a scripted model calls them, the server half reads
// the Secret and calls the GitHub peer, whose log shows which token each request carried.
describe("GitHub pull request tools", () => {
  let github: GithubPeer;
  let orka: OrkaUnderTest;
  let llm: LlmPeer;
  let stop: () => Promise<void>;

  beforeAll(async () => {
    github = await startGithubPeer();
    github.addToken("read-token-1234567890", "reader", "read");
    await github.addRepo(REPO, { files: { "README.md": "hello\n" } });
    for (const [branch, title] of [["one", "First change"], ["two", "Second change"]] as const) {
      await github.commit(REPO, branch, { [`${branch}.txt`]: `${branch}\n` });
      await github.openPullRequest(REPO, { head: branch, title, body: "é".repeat(600), user: "dev" });
    }
    ({ orka, peer: llm, stop } = await startOrkaWithPeer(`
apiVersion: v1
kind: Secret
metadata: {name: gh-read}
stringData: {token: read-token-1234567890}
`, { ORKA_GITHUB_API_BASE_URL: github.baseUrl, GITHUB_TOKEN: undefined as unknown as string }));
  });
  afterAll(async () => {
    await stop();
    await github.stop();
  });

  it("lists open pull requests with the workspace's read credential", async () => {
    const before = github.log.length;
    const { results } = await runToolCalls(orka, llm, [{ name: "list_pull_requests", arguments: { repo_url: "https://github.com/ACME/Widgets.git", per_page: 500 } }], { workspace: WORKSPACE });
    expect(results[0]).toMatchObject({ total_count: 2 });
    expect(results[0].pull_requests.map((p: any) => [p.number, p.title, p.head_branch, p.base_branch, p.author, p.draft])).toEqual([
      [2, "Second change", "two", "main", "dev", false],
      [1, "First change", "one", "main", "dev", false],
    ]);
    expect(results[0].pull_requests[0].body).toBe(`${"é".repeat(500)}...`);
    const requests = github.log.slice(before);
    expect(requests.map((r) => [r.method, r.path, r.login, r.apiVersion])).toEqual([["GET", "/repos/acme/widgets/pulls?state=open&per_page=100&page=1", "reader", "2022-11-28"]]);
  });

  it("refuses a repository outside the task's scope before reading a Secret or calling GitHub", async () => {
    const before = github.log.length;
    // The read Secret does not exist: a call that read it would fail on that, not on the scope.
    const { results } = await runToolCalls(orka, llm, [{ name: "list_pull_requests", arguments: { repo_url: "git@github.com:acme/other.git" } }], {
      workspace: { gitRepo: "https://github.com/acme/widgets", readCredentialRef: "no-such-secret" },
    });
    expect(results[0]).toBe("Error executing tool: repo_url repository acme/other does not match permitted repository scope task workspace=acme/widgets");
    expect(github.log.slice(before)).toEqual([]);
  });
});
