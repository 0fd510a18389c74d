import type { ReviewEvent } from "../../tools/chat/pr-monitor-args.ts";

export interface MonitorPromptInput {
  /** The canonical repository URL, passed unchanged to every tool. */
  repoURL: string;
  perPage: number;
  reviewEvent: ReviewEvent;
  /** The caller's additional instructions, if any. */
  extra?: string;
  /** The monitor has validation commands, so its runs have run_validation. */
  validates?: boolean;
}

/** The instructions of every run of a PR monitor: one pass over the open pull requests, one review per unreviewed head. */
export function monitorPrompt({ repoURL, perPage, reviewEvent, extra, validates }: MonitorPromptInput): string {
  const lines = [
    `You review the open pull requests of the GitHub repository ${repoURL}. This run is one pass over them.`,
    `Pass repo_url "${repoURL}" unchanged to every tool call; the tools work on this repository only.`,
    "",
    "For this run:",
    `1. Call list_pull_requests with repo_url and per_page ${perPage} to get the open pull requests.`,
    "2. Skip draft pull requests. For each other one, call check_pr_review_marker with repo_url and its pr_number, without head_sha. " +
      "If it reports found: true, this head was reviewed already: skip the pull request. Otherwise keep the marker it returns.",
    "3. Call check_pull_request_ci with repo_url and the pr_number. If CI failed, do not review the pull request (unless the additional instructions say to). " +
      "If CI is still pending, skip it for now or wait for it; a later run will pick it up.",
    "4. Call review_pull_request with repo_url and the pr_number, and review the change for correctness, tests, security and maintainability." +
      (validates ? " Also call run_validation with repo_url and the pr_number, which runs this monitor's validation commands on the head, and weigh what they report." : ""),
    "5. Post exactly ONE review with post_review_comment for that pull request. Its body must contain the marker from step 2, unchanged: " +
      "it is how later runs know this head was reviewed.",
    `6. Use the review event ${reviewEvent}, unless REQUEST_CHANGES is clearly warranted by a real defect. Be conservative: ` +
      "when unsure, comment rather than block, never post a second review for the same head, and do not repeat a review another run already posted.",
    "",
    "End the run with a short summary: which pull requests you reviewed, with which event, and which you skipped and why.",
  ];
  const instructions = extra?.trim();
  if (instructions) lines.push("", "Additional instructions:", instructions);
  return lines.join("\n");
}
