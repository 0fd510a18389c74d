import type { Task } from "../resources/task.ts";
import type { CheckoutPlan } from "../workspace/checkout.ts";
import type { GithubClient } from "./client.ts";
import type { GithubAccess, GithubTarget } from "./scope.ts";
import type { GithubSettings } from "./settings.ts";

/** What one GitHub call runs with: a client holding the resolved token, and the repository it may act on. */
export interface GithubCall {
  client: GithubClient;
  owner: string;
  repo: string;
  target: GithubTarget;
  settings: GithubSettings;
  /** The Task whose attempt made the call. */
  caller: Task;
  /** Checks a commit out where the calling attempt can read it; returns the directory. */
  checkOutForAttempt: (plan: CheckoutPlan) => Promise<string>;
}

/**
 * The server half of one GitHub tool. `check` refuses missing or bad values (given the calling Task) before
 * the scope, the Secret or GitHub is touched; `checkTask` refuses what the scope Task's own state rules out,
 * before its Secret is read; `run` makes the GitHub calls.
 */
export interface GithubOperation<Args> {
  access: GithubAccess;
  check?: (args: Args, caller: Task) => void;
  checkTask?: (args: Args, task: Task) => void;
  run: (args: Args, call: GithubCall) => Promise<unknown>;
}

/** At most this many code points of an issue or pull request body go into a list, then `...`. */
export const LIST_BODY_CODE_POINTS = 500;

/** `text` cut to `limit` Unicode code points, `...` appended when it was longer. */
export function cutCodePoints(text: string | null | undefined, limit = LIST_BODY_CODE_POINTS): string {
  const points = Array.from(text ?? "");
  return points.length > limit ? `${points.slice(0, limit).join("")}...` : (text ?? "");
}

/** The page a list tool reads: 30 per page and the first page unless asked (the schema refuses values out of range). */
export function pageOf(args: { per_page?: number; page?: number }): { per_page: number; page: number } {
  return { per_page: args.per_page ?? 30, page: args.page ?? 1 };
}

/** Whether GitHub's `Link` header names a next page. */
export function hasNextPage(link: string | undefined): boolean {
  return /<[^>]*>;\s*rel="next"/.test(link ?? "");
}

export const labelNames = (labels: (string | { name?: string })[] | undefined) => (labels ?? []).map((l) => (typeof l === "string" ? l : (l.name ?? "")));
