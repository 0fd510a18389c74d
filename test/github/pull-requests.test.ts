import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createGithubClient } from "../../src/github/client.ts";
import { MAX_REVIEW_DIFF_BYTES, MAX_REVIEW_PATCH_BYTES, reviewPullRequest } from "../../src/github/pull-requests.ts";
import type { GithubCall } from "../../src/github/operation.ts";
import type { Task } from "../../src/resources/task.ts";
import { githubSettings } from "../../src/github/settings.ts";
import { startGithubPeer, type GithubPeer } from "../peers/github-server.ts";

const REPO = "acme/widgets";

// review_pull_request's server half against the GitHub peer, on a pull request too large to return whole.
describe("reviewing a large pull request", () => {
  let peer: GithubPeer;
  let pr: number;

  beforeAll(async () => {
    peer = await startGithubPeer();
    peer.addToken("reader-token-123456", "reader", "read");
    await peer.addRepo(REPO, { files: { "README.md": "hello\n" } });
    const big = Array.from({ length: 40_000 }, (_, i) => `line ${i} ünïcödé ${"x".repeat(20)}`).join("\n");
    await peer.commit(REPO, "big", { "a-big.txt": big, "b-small.txt": "small\n" });
    pr = await peer.openPullRequest(REPO, { head: "big", user: "dev" });
  });
  afterAll(() => peer.stop());

  it("cuts the diff at 1 MiB on a character boundary and the patches at their budget, and says so", async () => {
    const client = createGithubClient({ baseUrl: peer.baseUrl, token: "reader-token-123456", timing: { retryAfterBaseMs: 1, timeoutMs: 10_000 } });
    const [owner, repo] = REPO.split("/");
    const { data: fullDiff } = await client.rest.pulls.get({ owner, repo, pull_number: pr, mediaType: { format: "diff" } });
    const result = (await reviewPullRequest.run({ pr_number: pr }, { client, owner, repo, settings: githubSettings({}), ...({} as Pick<GithubCall, "target" | "caller" | "checkOutForAttempt">) })) as any;
    expect(Buffer.byteLength(String(fullDiff))).toBeGreaterThan(MAX_REVIEW_DIFF_BYTES);
    expect(result.diff_truncated).toBe(true);
    expect(Buffer.byteLength(result.diff)).toBeLessThanOrEqual(MAX_REVIEW_DIFF_BYTES);
    expect(Buffer.byteLength(result.diff)).toBeGreaterThan(MAX_REVIEW_DIFF_BYTES - 4);
    expect(String(fullDiff).startsWith(result.diff)).toBe(true);
    expect(result.files.map((f: any) => [f.filename, f.patch_truncated ?? false])).toEqual([["a-big.txt", true], ["b-small.txt", true]]);
    expect(Buffer.byteLength(result.files[0].patch)).toBeLessThanOrEqual(MAX_REVIEW_PATCH_BYTES);
    expect(result.files[1].patch).toBe("");
    expect(result.files[0]).toMatchObject({ status: "added", additions: 40_000, deletions: 0 });
    // Within the executor's 2 MiB cap for one tool result, as the worker formats it.
    expect(Buffer.byteLength(JSON.stringify(result, null, 2))).toBeLessThan(2 * 1024 * 1024);
  });

  it("refuses a pull request number that is not positive before calling GitHub", () => {
    expect(() => reviewPullRequest.check?.({ pr_number: 0 }, {} as Task)).toThrow("pr_number is required");
  });
});
