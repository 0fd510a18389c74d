import { createHmac } from "node:crypto";
import { githubFailure } from "./failure.ts";
import type { GithubOperation } from "./operation.ts";
import { requirePrNumber } from "./pull-requests.ts";
import type { MarkerSettings } from "./settings.ts";

/** What a review marker binds: a repository, a pull request and the head it reviewed. */
export interface MarkerSubject {
  owner: string;
  repo: string;
  pr: number;
  headSha: string;
}

const REVIEWS_PAGE = 100;
/** A pull request with more reviews than this is scanned this far. */
const MAX_REVIEW_PAGES = 30;
const MARKER_BLOCK = /<!--\s*orka:pr-review\s+([^<>]*?)\s*-->/g;

const repoOf = (subject: MarkerSubject) => `${subject.owner}/${subject.repo}`.toLowerCase();

/**
 * Hex HMAC-SHA256 of `<owner>/<repo>\n<pr>\n<head sha>` under `key`. It does not involve the GitHub token,
 * so markers survive token rotation.
 */
export function markerSignature(key: string, subject: MarkerSubject): string {
  return createHmac("sha256", key).update(`${repoOf(subject)}\n${subject.pr}\n${subject.headSha}`).digest("hex");
}

/** The hidden marker a review of this head carries. */
export function reviewMarker(key: string, subject: MarkerSubject): string {
  return `<!-- orka:pr-review repo=${repoOf(subject)} pr=${subject.pr} head_sha=${subject.headSha} sig=${markerSignature(key, subject)} -->`;
}

/** Whether `body` holds this head's exact marker under one of the (non-empty) keys: whoever wrote it, it was signed. */
export function hasSignedMarker(body: string, subject: MarkerSubject, keys: readonly string[]): boolean {
  return keys.some((key) => key !== "" && body.includes(reviewMarker(key, subject)));
}

function fieldsOf(block: string): Map<string, string> {
  return new Map(block.split(/\s+/).map((pair) => {
    const at = pair.indexOf("=");
    return at < 0 ? [pair, ""] : [pair.slice(0, at), pair.slice(at + 1)];
  }));
}

/**
 * Whether `body` holds a marker that counts only from the trusted author: the legacy
 * `<!-- orka:pr-review head_sha=<sha> -->`, or a block naming this repository (any case), pull request and
 * head with a non-empty signature under any key (an empty key's marker anyone could forge). Prose never counts.
 */
export function hasUnsignedMarker(body: string, subject: MarkerSubject): boolean {
  for (const [, block] of body.matchAll(MARKER_BLOCK)) {
    const fields = fieldsOf(block);
    if (fields.get("head_sha")?.toLowerCase() !== subject.headSha) continue;
    if (fields.size === 1) return true;
    if (fields.get("repo")?.toLowerCase() === repoOf(subject) && fields.get("pr") === String(subject.pr) && fields.get("sig")) return true;
  }
  return false;
}

/**
 * check_pr_review_marker: whether a review of the pull request's head already carries Orka's marker,
 * scanning every page of reviews until a short one; the marker to put in a new review is returned either way.
 */
export const checkPrReviewMarker: GithubOperation<{ pr_number: number; head_sha?: string }> = {
  access: "read",
  check: requirePrNumber,
  async run({ pr_number, head_sha }, { client, owner, repo, settings }) {
    let headSha = head_sha?.toLowerCase();
    if (!headSha) {
      const { data: pull } = await client.rest.pulls.get({ owner, repo, pull_number: pr_number }).catch((err) => {
        throw githubFailure(err, "failed to get pull request");
      });
      headSha = pull.head.sha;
      if (pull.merged) return { found: false, pr_number, head_sha: headSha, message: "pull request is already merged" };
      if (pull.state === "closed") return { found: false, pr_number, head_sha: headSha, message: "pull request is closed" };
    }
    const subject = { owner, repo, pr: pr_number, headSha };
    const marker = reviewMarker(settings.marker.secret, subject);
    const keys = [settings.marker.secret, ...settings.marker.previousSecrets];
    let trusted: Promise<string | undefined> | undefined;
    const trustedAuthor = () => (trusted ??= trustedLogin(settings.marker, () => client.rest.users.getAuthenticated().then(({ data }) => data.login)));

    for (let page = 1; page <= MAX_REVIEW_PAGES; page++) {
      const { data: reviews } = await client.rest.pulls.listReviews({ owner, repo, pull_number: pr_number, per_page: REVIEWS_PAGE, page }).catch((err) => {
        throw githubFailure(err, "failed to list pull request reviews");
      });
      for (const review of reviews) {
        const body = review.body ?? "";
        const author = review.user?.login ?? "";
        const found = hasSignedMarker(body, subject, keys) || (hasUnsignedMarker(body, subject) && author.toLowerCase() === (await trustedAuthor())?.toLowerCase());
        if (found) {
          return { found: true, pr_number, head_sha: headSha, marker, source: "review", html_url: review.html_url, author, message: "review marker found for this PR head SHA" };
        }
      }
      if (reviews.length < REVIEWS_PAGE) break;
    }
    return { found: false, pr_number, head_sha: headSha, marker, message: "no review marker found for this PR head SHA" };
  },
};

/** The configured trusted author, else the login of the call's own credential; nobody when that cannot be read. */
async function trustedLogin(settings: MarkerSettings, ownLogin: () => Promise<string>): Promise<string | undefined> {
  if (settings.trustedAuthor) return settings.trustedAuthor;
  return ownLogin().catch(() => undefined);
}
