// The waits of the GitHub tools that poll, read from their arguments: checked by the worker half that
// waits and again by the control plane, before any Task, Secret or GitHub is read.
import { errorMessage, OrkaError } from "../util/errors.ts";
import { formatDuration, MAX_DURATION_MS, parseDuration } from "../util/duration.ts";

const DEFAULT_CI_POLL_INTERVAL_MS = 30_000;
const DEFAULT_AUTO_MERGE_TIMEOUT_MS = 30 * 60_000;
/** How often auto_merge_pull_request polls unless the operator's tool settings say otherwise (tests do). */
export const DEFAULT_AUTO_MERGE_POLL_INTERVAL_MS = 30_000;

/** A Go duration in milliseconds that may be negative (`-5s`), or the refusal naming the field. */
function signedDuration(field: string, text: string): number {
  const trimmed = text.trim();
  const negative = trimmed.startsWith("-");
  let ms: number;
  try {
    ms = parseDuration(negative ? trimmed.slice(1) : trimmed);
  } catch (err) {
    throw new OrkaError("invalid_argument", `invalid ${field} "${text}": ${errorMessage(err)}`);
  }
  if (ms > MAX_DURATION_MS) throw new OrkaError("invalid_argument", `invalid ${field} "${text}": longer than ${formatDuration(MAX_DURATION_MS)}`);
  return negative ? -ms : ms;
}

export interface CiWait {
  waitMs: number;
  pollMs: number;
}

/** check_pull_request_ci's wait: undefined for one immediate check (no wait_timeout, or zero). */
export function ciWait(args: { wait_timeout?: string; poll_interval?: string }): CiWait | undefined {
  const waitMs = args.wait_timeout?.trim() ? signedDuration("wait_timeout", args.wait_timeout) : 0;
  if (waitMs < 0) throw new OrkaError("invalid_argument", "wait_timeout must be non-negative");
  const pollMs = args.poll_interval?.trim() ? signedDuration("poll_interval", args.poll_interval) : DEFAULT_CI_POLL_INTERVAL_MS;
  if (pollMs <= 0) throw new OrkaError("invalid_argument", "poll_interval must be positive");
  return waitMs > 0 ? { waitMs, pollMs } : undefined;
}

/** auto_merge_pull_request's deadline: 30m unless `timeout` says otherwise; never zero or less. */
export function autoMergeTimeout(timeout: string | undefined): number {
  const ms = timeout?.trim() ? signedDuration("timeout", timeout) : DEFAULT_AUTO_MERGE_TIMEOUT_MS;
  if (ms <= 0) throw new OrkaError("invalid_argument", "timeout must be positive");
  return ms;
}
