import { Cron } from "croner";
import { MAX_NAME_LENGTH } from "../resources/meta.ts";
import type { TaskSpec } from "../resources/task.ts";
import { sha256Hex } from "../util/hash.ts";

export const DEFAULT_STARTING_DEADLINE_SECONDS = 100;
const MAX_TICKS_SCANNED = 10_000;

export function parseSchedule(spec: TaskSpec): Cron {
  try {
    return new Cron(spec.schedule!, { timezone: spec.timeZone ?? "UTC", paused: true });
  } catch (err) {
    throw new Error(`invalid cron expression: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/** The latest tick after `since` that is not later than `now`, if any (earlier missed ticks are dropped). */
export function latestDueTick(cron: Cron, since: Date, now: Date): Date | undefined {
  let due: Date | undefined;
  let next = cron.nextRun(since);
  for (let i = 0; next && next <= now && i < MAX_TICKS_SCANNED; i++) {
    due = next;
    next = cron.nextRun(next);
  }
  return due;
}

/** The spec a scheduled run gets: its parent's, without the schedule fields. */
export function scheduledChildSpec(spec: TaskSpec): TaskSpec {
  const {
    schedule: _schedule,
    timeZone: _timeZone,
    concurrencyPolicy: _concurrencyPolicy,
    startingDeadlineSeconds: _deadline,
    successfulJobsHistoryLimit: _ok,
    failedJobsHistoryLimit: _failed,
    suspend: _suspend,
    ...rest
  } = spec;
  return rest;
}

/**
 * The name of `parent`'s run at `tick`: `<parent>-<unix seconds>`. When that would pass the name
 * limit, the parent part is cut and followed by a short hash of the whole parent name (as
 * Kubernetes shortens generated names), so the run stays a name the API can read and write.
 */
export function scheduledChildName(parent: string, tick: Date): string {
  const suffix = `-${Math.floor(tick.getTime() / 1000)}`;
  if (parent.length + suffix.length <= MAX_NAME_LENGTH) return `${parent}${suffix}`;
  const hash = sha256Hex(parent).slice(0, 8);
  const head = parent.slice(0, MAX_NAME_LENGTH - suffix.length - hash.length - 1).replace(/[-.]+$/, "");
  return `${head}-${hash}${suffix}`;
}
