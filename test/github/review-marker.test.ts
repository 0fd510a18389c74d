import { createHmac } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createGithubClient } from "../../src/github/client.ts";
import { checkPrReviewMarker, hasUnsignedMarker, reviewMarker } from "../../src/github/review-marker.ts";
import type { GithubCall } from "../../src/github/operation.ts";
import { githubSettings } from "../../src/github/settings.ts";
import { startGithubPeer, type GithubPeer } from "../peers/github-server.ts";

const REPO = "Acme/Widgets";
const FAST = { retryAfterBaseMs: 1, timeoutMs: 5_000 };

/** The spec's signature, computed here on its own: hex HMAC-SHA256 of `<owner>/<repo>\n<pr>\n<sha>`. */
const sign = (key: string, pr: number, sha: string) => createHmac("sha256", key).update(`acme/widgets\n${pr}\n${sha}`).digest("hex");
const markerText = (key: string, pr: number, sha: string) => `<!-- orka:pr-review repo=acme/widgets pr=${pr} head_sha=${sha} sig=${sign(key, pr, sha)} -->`;

// check_pr_review_marker's server half, driven against the GitHub peer with the settings an operator gives.
describe("review markers", () => {
  let peer: GithubPeer;
  let branches = 0;

  /** A new open pull request and its head SHA. */
  async function pull(): Promise<{ pr: number; sha: string }> {
    const branch = `change-${++branches}`;
    const sha = await peer.commit(REPO, branch, { [`${branch}.txt`]: `${branch}\n` });
    return { pr: await peer.openPullRequest(REPO, { head: branch, user: "dev" }), sha };
  }

  async function check(args: { pr_number: number; head_sha?: string }, env: Parameters<typeof githubSettings>[0] = {}, token = "bot-token-123456") {
    const settings = githubSettings(env);
    const client = createGithubClient({ baseUrl: peer.baseUrl, token, timing: FAST });
    return (await checkPrReviewMarker.run(args, { client, owner: "Acme", repo: "Widgets", settings, ...({} as Pick<GithubCall, "target" | "caller" | "checkOutForAttempt">) })) as Record<string, unknown>;
  }

  beforeAll(async () => {
    peer = await startGithubPeer();
    peer.addToken("bot-token-123456", "orka-bot", "read");
    await peer.addRepo(REPO, { files: { "README.md": "hello\n" } });
  });
  afterAll(() => peer.stop());

  it("signs repository, pull request and head with the configured key, the repository in lower case", () => {
    const subject = { owner: "Acme", repo: "Widgets", pr: 7, headSha: "abc1234" };
    expect(reviewMarker("k1", subject)).toBe(markerText("k1", 7, "abc1234"));
  });

  it("finds a marker signed with the secret, whoever wrote it, and returns the fields of a match", async () => {
    const { pr, sha } = await pull();
    await peer.addReview(REPO, pr, { user: "someone-else", state: "COMMENTED", body: `Looks good.\n\n${markerText("k1", pr, sha)}` });
    const result = await check({ pr_number: pr, head_sha: sha }, { markerSecret: " k1 " });
    expect(result).toEqual({
      found: true, pr_number: pr, head_sha: sha, marker: markerText("k1", pr, sha), source: "review",
      html_url: expect.stringMatching(new RegExp(`/pull/${pr}#pullrequestreview-\\d+$`)), author: "someone-else", message: "review marker found for this PR head SHA",
    });
  });

  it("accepts a previous key after rotation, and returns the marker of the current one", async () => {
    const { pr, sha } = await pull();
    await peer.addReview(REPO, pr, { user: "someone-else", state: "COMMENTED", body: markerText("old-key", pr, sha) });
    const result = await check({ pr_number: pr, head_sha: sha }, { markerSecret: "new-key", previousMarkerSecrets: "older, old-key ,", trustedAuthor: "orka-bot" });
    expect(result).toMatchObject({ found: true, marker: markerText("new-key", pr, sha), author: "someone-else" });
  });

  it("ignores a wrong key, another head and prose from anyone but the trusted author", async () => {
    const { pr, sha } = await pull();
    await peer.addReview(REPO, pr, { user: "mallory", state: "COMMENTED", body: markerText("guessed-key", pr, sha) });
    await peer.addReview(REPO, pr, { user: "mallory", state: "COMMENTED", body: `<!-- orka:pr-review head_sha=${sha} -->` });
    await peer.addReview(REPO, pr, { user: "orka-bot", state: "COMMENTED", body: markerText("k1", pr, "f".repeat(40)) });
    await peer.addReview(REPO, pr, { user: "orka-bot", state: "COMMENTED", body: `I reviewed orka:pr-review head_sha=${sha} already` });
    const result = await check({ pr_number: pr, head_sha: sha }, { markerSecret: "k1", trustedAuthor: "orka-bot" });
    expect(result).toEqual({ found: false, pr_number: pr, head_sha: sha, marker: markerText("k1", pr, sha), message: "no review marker found for this PR head SHA" });
  });

  it("trusts a legacy or unsigned-key marker only from the trusted author, named or read from GET /user", async () => {
    const { pr, sha } = await pull();
    await peer.addReview(REPO, pr, { user: "mallory", state: "COMMENTED", body: markerText("", pr, sha) });
    // Markers signed with an empty key could be written by anyone: from others they do not count.
    expect(await check({ pr_number: pr, head_sha: sha })).toMatchObject({ found: false });
    await peer.addReview(REPO, pr, { user: "orka-bot", state: "COMMENTED", body: `<!-- orka:pr-review head_sha=${sha} -->` });
    const before = peer.log.length;
    expect(await check({ pr_number: pr, head_sha: sha })).toMatchObject({ found: true, author: "orka-bot" });
    expect(peer.log.slice(before).map((e) => e.path)).toContain("/user");
    expect(await check({ pr_number: pr, head_sha: sha }, { trustedAuthor: "someone-else" })).toMatchObject({ found: false });
    expect(await check({ pr_number: pr, head_sha: sha }, { trustedAuthor: "ORKA-BOT" })).toMatchObject({ found: true });
  });

  it("reads every page of reviews until a short one", async () => {
    const { pr, sha } = await pull();
    for (let i = 0; i < 100; i++) await peer.addReview(REPO, pr, { user: "dev", state: "COMMENTED", body: `comment ${i}` });
    await peer.addReview(REPO, pr, { user: "dev", state: "COMMENTED", body: markerText("k1", pr, sha) });
    const before = peer.log.length;
    expect(await check({ pr_number: pr }, { markerSecret: "k1" })).toMatchObject({ found: true, head_sha: sha });
    expect(peer.log.slice(before).map((e) => e.path)).toEqual([
      `/repos/Acme/Widgets/pulls/${pr}`,
      `/repos/Acme/Widgets/pulls/${pr}/reviews?per_page=100&page=1`,
      `/repos/Acme/Widgets/pulls/${pr}/reviews?per_page=100&page=2`,
    ]);
  });

  it("reads the head itself when none is given, and reports a closed or merged pull request without a marker", async () => {
    const closed = await pull();
    await peer.closePullRequest(REPO, closed.pr);
    expect(await check({ pr_number: closed.pr })).toEqual({ found: false, pr_number: closed.pr, head_sha: closed.sha, message: "pull request is closed" });
    const merged = await pull();
    await peer.mergePullRequest(REPO, merged.pr);
    expect(await check({ pr_number: merged.pr })).toMatchObject({ found: false, head_sha: merged.sha, message: "pull request is already merged" });
  });

  it("reads a marker block's fields in any case of the repository, and never a block without a signature", () => {
    const subject = { owner: "acme", repo: "widgets", pr: 3, headSha: "abc1234" };
    expect(hasUnsignedMarker("<!-- orka:pr-review repo=ACME/Widgets pr=3 head_sha=abc1234 sig=00 -->", subject)).toBe(true);
    expect(hasUnsignedMarker("<!-- orka:pr-review repo=acme/widgets pr=3 head_sha=abc1234 sig= -->", subject)).toBe(false);
    expect(hasUnsignedMarker("<!-- orka:pr-review repo=acme/widgets pr=4 head_sha=abc1234 sig=00 -->", subject)).toBe(false);
    expect(hasUnsignedMarker("<!-- orka:pr-review repo=acme/other pr=3 head_sha=abc1234 sig=00 -->", subject)).toBe(false);
  });
});
