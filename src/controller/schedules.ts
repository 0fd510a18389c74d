import { Cron } from "croner";
import type { TaskSpec } from "../resources/task.ts";

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
