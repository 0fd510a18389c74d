import { z } from "zod";
import { namespaceName } from "../../resources/meta.ts";
import { cronSchedule } from "../../resources/task.ts";
import { validationSchema } from "../../resources/validation.ts";

export const DEFAULT_PER_PAGE = 30;
export const MAX_PER_PAGE = 100;
export const REVIEW_EVENTS = ["COMMENT", "APPROVE", "REQUEST_CHANGES"] as const;
export type ReviewEvent = (typeof REVIEW_EVENTS)[number];

const required = (what: string) => z.string({ message: `is required: ${what}` }).trim().min(1, `is required: ${what}`);
/** An optional name: blank counts as not given. */
const optionalName = z.string().trim().optional().transform((value) => value || undefined);

/**
 * Arguments of create_pr_monitor, checked by the tool and again by the control plane. Only their shape is
 * checked here; the repository URL, the Agent and the Secrets are checked by the control plane, in order.
 */
export const prMonitorArgs = z.object({
  name: required("a human-readable monitor name").max(253, "must be at most 253 characters").describe("Human-readable monitor name; the created Task gets a generated name"),
  repo_url: required("the GitHub repository root, such as https://github.com/owner/repo").describe(
    "Credential-free GitHub repository root: https://github.com/owner/repo, https://github.com/owner/repo.git or git@github.com:owner/repo.git",
  ),
  schedule: required('a cron schedule such as "0 * * * *"').pipe(cronSchedule).describe('Cron schedule of the monitor, such as "0 * * * *" (minute hour day-of-month month day-of-week)'),
  agent_ref: required("the AI Agent that reviews").describe("AI Agent of the monitor Task: coordination enabled, autonomous coordination disabled"),
  namespace: namespaceName.optional().describe("Namespace of the monitor Task (defaults to this Task's)"),
  provider_ref: optionalName.describe("Provider of the monitor Task (defaults to the Agent's)"),
  gitSecretRef: optionalName.describe(
    "Secret with the GitHub read token (key token, password or GITHUB_TOKEN); defaults to the first of git-credentials, github-credentials, copilot-token, github-token, git-token",
  ),
  forgeSecretRef: optionalName.describe("Secret with the GitHub token that posts reviews (a different Secret than the read one); without it, reviews cannot be posted"),
  per_page: z
    .number()
    .int()
    .optional()
    .transform((n) => (n === undefined || n <= 0 ? DEFAULT_PER_PAGE : Math.min(n, MAX_PER_PAGE)))
    .describe(`Open pull requests scanned per run (default ${DEFAULT_PER_PAGE}, at most ${MAX_PER_PAGE})`),
  review_event: z.string().optional().describe("COMMENT (default), APPROVE or REQUEST_CHANGES"),
  prompt: z.string().max(32 * 1024, "must be at most 32768 characters").optional().describe("Additional instructions appended to the monitor's prompt"),
  validation: validationSchema
    .optional()
    .describe(
      "Commands the monitor's runs may check a pull request's head with (run_validation): {commands: 1 to 20 shell commands, timeout: a duration, default 10m, at most 30m}. " +
        "Each runs with sh -c in a sandbox without network or credentials, over a copy of the head.",
    ),
});
export type PrMonitorArgs = z.output<typeof prMonitorArgs>;
