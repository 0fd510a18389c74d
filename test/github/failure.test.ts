import { describe, expect, it } from "vitest";
import { githubFailure, MAX_ERROR_BODY_BYTES } from "../../src/github/failure.ts";

/** The shape of Octokit's RequestError: a status, the request, and GitHub's answer. */
function requestError(status: number, data: unknown, headers: Record<string, string> = {}): Error {
  return Object.assign(new Error(`HTTP ${status}`), { status, request: { method: "GET", url: "https://api.github.com/x", headers: {} }, response: { headers, data } });
}

describe("what a failed GitHub call tells the model", () => {
  it("quotes at most 2 KiB of GitHub's answer, marking the cut", () => {
    const failure = githubFailure(requestError(422, "é".repeat(5000)), "failed to post review");
    const quoted = failure.message.replace(/^failed to post review: GitHub API returned 422: /, "");
    expect(failure.code).toBe("invalid_argument");
    expect(quoted.endsWith("…")).toBe(true);
    expect(Buffer.byteLength(quoted.slice(0, -1))).toBeLessThanOrEqual(MAX_ERROR_BODY_BYTES);
    expect(Buffer.byteLength(quoted.slice(0, -1))).toBeGreaterThan(MAX_ERROR_BODY_BYTES - 4);
  });

  it("quotes a short JSON answer whole, and names a rate limit it did not wait out", () => {
    expect(githubFailure(requestError(404, { message: "Not Found" })).message).toBe('GitHub API returned 404: {"message":"Not Found"}');
    const limited = githubFailure(requestError(429, { message: "slow down" }, { "retry-after": "120" }), "failed to list pull requests");
    expect(limited.code).toBe("resource_exhausted");
    expect(limited.message).toBe("failed to list pull requests: github_rate_limited: GitHub's rate limit is exhausted; retry after 120s");
  });
});
