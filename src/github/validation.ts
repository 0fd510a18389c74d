import type { Task } from "../resources/task.ts";
import { DEFAULT_VALIDATION_TIMEOUT } from "../resources/validation.ts";
import { parseDuration } from "../util/duration.ts";
import { OrkaError } from "../util/errors.ts";
import { clipText } from "../util/text.ts";
import { githubFailure } from "./failure.ts";
import type { GithubOperation } from "./operation.ts";
import { requirePrNumber } from "./pull-requests.ts";

interface RunValidationArgs {
  pr_number: number;
  commands?: string[];
  timeout?: string;
}

/** What the worker half runs: a checkout of the head and the commands, which come from the calling Task's spec alone. */
export interface ValidationPlan {
  head_sha: string;
  /** A directory the attempt may read: the head's files, checked out with the read credential, which it does not hold. */
  checkout: string;
  commands: string[];
  timeout_ms: number;
}

const COMMAND_NOT_CONFIGURED = "command not configured for this monitor";

/** A refusal quotes each command this far: enough to recognise it. */
const QUOTED_COMMAND_CHARS = 200;
const quoted = (commands: readonly string[]) => commands.map((command) => JSON.stringify(clipText(command, QUOTED_COMMAND_CHARS))).join(", ");

/**
 * The commands to run: the calling Task's configured ones, all of them or the ones the model picked, in
 * their configured order. A command the configuration does not hold is refused, so a model can only
 * choose among what the monitor's creator wrote.
 */
function commandsToRun(args: Pick<RunValidationArgs, "commands">, caller: Task): string[] {
  const configured = caller.spec.validation?.commands;
  if (!configured) {
    throw new OrkaError(
      "failed_precondition",
      `task ${caller.metadata.name} has no validation commands (spec.validation): run_validation runs only the commands a PR monitor was created with`,
    );
  }
  if (!args.commands || args.commands.length === 0) return [...configured];
  const unknown = args.commands.filter((command) => !configured.includes(command));
  if (unknown.length > 0) {
    throw new OrkaError("invalid_argument", `${COMMAND_NOT_CONFIGURED}: ${quoted(unknown)}; pick among ${quoted(configured)}, written exactly so, or leave commands out to run them all`);
  }
  return configured.filter((command) => args.commands!.includes(command));
}

/**
 * run_validation's server half: the pull request must be open; its head is checked out with the read
 * credential where the calling attempt can read it (the credential stays in git's environment, never in
 * the files), and the worker half is told what to run there. Nothing runs here.
 */
export const runValidation: GithubOperation<RunValidationArgs> = {
  access: "read",
  check(args, caller) {
    requirePrNumber(args);
    commandsToRun(args, caller);
  },
  async run(args, { client, target, caller, checkOutForAttempt }): Promise<ValidationPlan> {
    const commands = commandsToRun(args, caller);
    const { pr_number: number } = args;
    const { data: pull } = await client.rest.pulls.get({ owner: target.owner, repo: target.repo, pull_number: number }).catch((err) => {
      throw githubFailure(err, "failed to fetch pull request");
    });
    if (pull.merged) throw new OrkaError("failed_precondition", `pull request #${number} is already merged: there is no open head to validate`);
    if (pull.state !== "open") throw new OrkaError("failed_precondition", `pull request #${number} is closed: there is no open head to validate`);
    const headSHA = pull.head.sha;
    const checkout = await checkOutForAttempt({ remote: { url: `https://${target.host}/${target.owner}/${target.repo}`, credential: target.token }, baseSHA: headSHA });
    const timeout = args.timeout ?? caller.spec.validation?.timeout ?? DEFAULT_VALIDATION_TIMEOUT;
    return { head_sha: headSHA, checkout, commands, timeout_ms: parseDuration(timeout) };
  },
};
