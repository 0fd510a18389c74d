import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createGithubClient, type ClientTiming } from "../../src/github/client.ts";
import { githubFailure } from "../../src/github/failure.ts";
import { startGithubPeer, type GithubPeer } from "../peers/github-server.ts";

const REPO = "acme/widgets";
const [owner, repo] = REPO.split("/");
/** GitHub's waits, in milliseconds instead of seconds. */
const FAST: ClientTiming = { retryAfterBaseMs: 1, timeoutMs: 5_000 };

async function failureOf(promise: Promise<unknown>) {
  try {
    await promise;
  } catch (err) {
    return githubFailure(err);
  }
  throw new Error("expected the call to fail");
}

// The Octokit client Orka builds, driven against the GitHub peer: which answers it retries, waits out or
// gives up on, how large an answer it reads, and how long it waits.
describe("GitHub client", () => {
  let peer: GithubPeer;
  let issue: number;
  const client = (token = "reader-token-123456", timing = FAST) => createGithubClient({ baseUrl: peer.baseUrl, token, timing });
  const since = (start: number) => peer.log.slice(start).map((e) => `${e.method} ${e.status}`);

  beforeAll(async () => {
    peer = await startGithubPeer();
    peer.addToken("reader-token-123456", "reader", "read");
    peer.addToken("writer-token-123456", "writer", "write");
    await peer.addRepo(REPO);
    issue = peer.addIssue(REPO, { title: "bug", user: "dev" });
  });
  afterAll(() => peer.stop());

  it("sends the API version GitHub documents", async () => {
    const start = peer.log.length;
    await client().rest.repos.get({ owner, repo });
    expect(peer.log.slice(start).map((e) => [e.apiVersion, e.login])).toEqual([["2022-11-28", "reader"]]);
  });

  it("retries a read up to three times on 5xx, then gives up", async () => {
    let start = peer.log.length;
    peer.injectFault({ kind: "bad-gateway" }, 2);
    expect((await client().rest.repos.get({ owner, repo })).status).toBe(200);
    expect(since(start)).toEqual(["GET 502", "GET 502", "GET 200"]);

    start = peer.log.length;
    peer.injectFault({ kind: "bad-gateway" }, 4);
    const failure = await failureOf(client().rest.repos.get({ owner, repo }));
    expect([failure.code, failure.message]).toEqual(["unavailable", 'GitHub API returned 502: {"message":"Server Error","documentation_url":"https://docs.github.com/rest","status":"502"}']);
    expect(since(start)).toEqual(["GET 502", "GET 502", "GET 502", "GET 502"]);
  });

  it("never retries a write, whatever GitHub answers", async () => {
    let start = peer.log.length;
    peer.injectFault({ kind: "bad-gateway" }, 1, { method: "POST" });
    const failure = await failureOf(client("writer-token-123456").rest.issues.createComment({ owner, repo, issue_number: issue, body: "hi" }));
    expect(failure.code).toBe("unavailable");
    expect(since(start)).toEqual(["POST 502"]);
    start = peer.log.length;
    peer.injectFault({ kind: "rate-limit", retryAfterSeconds: 1 }, 1, { method: "POST" });
    const limited = await failureOf(client("writer-token-123456").rest.issues.createComment({ owner, repo, issue_number: issue, body: "hi" }));
    expect([limited.code, since(start)]).toEqual(["resource_exhausted", ["POST 429"]]);
  });

  it("does not retry a refusal, and never quotes the token", async () => {
    let start = peer.log.length;
    const missing = await failureOf(client().rest.pulls.get({ owner, repo, pull_number: 999 }));
    expect([missing.code, since(start)]).toEqual(["not_found", ["GET 404"]]);
    start = peer.log.length;
    const refused = await failureOf(client().rest.issues.createComment({ owner, repo, issue_number: issue, body: "hi" }));
    expect([refused.code, since(start)]).toEqual(["permission_denied", ["POST 403"]]);
    const unknown = await failureOf(client("unknown-token-98765").rest.repos.get({ owner, repo }));
    expect(unknown.message).toBe('GitHub API returned 401: {"message":"Bad credentials","documentation_url":"https://docs.github.com/rest","status":"401"}');
    for (const failure of [missing, refused, unknown]) expect(failure.message).not.toMatch(/token-/);
  });

  it("waits out a rate limit at most twice, and only when GitHub asks for a minute or less", async () => {
    let start = peer.log.length;
    peer.injectFault({ kind: "rate-limit", retryAfterSeconds: 1 }, 2);
    expect((await client().rest.repos.get({ owner, repo })).status).toBe(200);
    expect(since(start)).toEqual(["GET 429", "GET 429", "GET 200"]);

    start = peer.log.length;
    peer.injectFault({ kind: "rate-limit", retryAfterSeconds: 1 }, 3);
    const exhausted = await failureOf(client().rest.repos.get({ owner, repo }));
    expect([exhausted.code, since(start)]).toEqual(["resource_exhausted", ["GET 429", "GET 429", "GET 429"]]);
    expect(exhausted.message).toBe("github_rate_limited: GitHub's rate limit is exhausted; retry after 1s");

    start = peer.log.length;
    peer.injectFault({ kind: "rate-limit", retryAfterSeconds: 120 }, 1);
    const tooLong = await failureOf(client().rest.repos.get({ owner, repo }));
    expect([tooLong.code, since(start)]).toEqual(["resource_exhausted", ["GET 429"]]);

    start = peer.log.length;
    peer.injectFault({ kind: "secondary-limit", retryAfterSeconds: 1 }, 1);
    expect((await client().rest.repos.get({ owner, repo })).status).toBe(200);
    expect(since(start)).toEqual(["GET 403", "GET 200"]);
  });

  it("refuses a JSON answer over 1 MiB instead of reading it all", async () => {
    const big = peer.addIssue(REPO, { title: "huge", body: "x".repeat(1024 * 1024 + 10), user: "dev" });
    const failure = await failureOf(client().rest.issues.get({ owner, repo, issue_number: big }));
    expect([failure.code, failure.message]).toEqual(["payload_too_large", `GitHub's answer exceeds ${1024 * 1024} bytes`]);
  });

  it("gives up on a request GitHub does not answer, without retrying it", async () => {
    let requests = 0;
    const silent = http.createServer(() => void requests++);
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    try {
      const baseUrl = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`;
      const slow = createGithubClient({ baseUrl, token: "t", timing: { retryAfterBaseMs: 1, timeoutMs: 200 } });
      const failure = await failureOf(slow.rest.repos.get({ owner, repo }));
      expect([failure.code, failure.message]).toEqual(["deadline_exceeded", "GitHub did not answer within 0.2s"]);
      const cancelled = new AbortController();
      const pending = createGithubClient({ baseUrl, token: "t", signal: cancelled.signal, timing: FAST }).rest.repos.get({ owner, repo });
      setTimeout(() => cancelled.abort(), 50);
      expect((await failureOf(pending)).message).toBe("the call was cancelled before GitHub answered");
      expect(requests).toBe(2);
    } finally {
      silent.closeAllConnections();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });
});
