import { Cron } from "croner";
import { ANNOTATION, API_VERSION, childrenOf, LABEL, MAX_NAME_LENGTH, type Resource } from "../resources/meta.ts";
import { errorMessage, OrkaError } from "../util/errors.ts";
import { sha256Hex } from "../util/hash.ts";
import { isTerminal, type Task, type TaskSpec, type TaskStatus } from "../resources/task.ts";
import { parentLink } from "../resources/parent-link.ts";
import { childSummary } from "./task/child-summary.ts";
import { completion } from "./task/completion.ts";
import { recordEvent, type TaskContext } from "./task/context.ts";
import { keyOf } from "./task/keys.ts";
import type { Transition } from "./task/status.ts";

export const DEFAULT_STARTING_DEADLINE_SECONDS = 100;
const MAX_TICKS_SCANNED = 10_000;

export function parseSchedule(spec: TaskSpec): Cron {
  try {
    return new Cron(spec.schedule!, { timezone: spec.timeZone ?? "UTC", paused: true });
  } catch (err) {
    throw new OrkaError("invalid_argument", `invalid cron expression: ${errorMessage(err)}`, { field: "spec.schedule" });
  }
}

/**
 * A Scheduled Task, like a Kubernetes CronJob: its latest due tick creates a run (a child Task),
 * unless it was missed by more than the starting deadline or (Forbid) the previous run is active;
 * old runs beyond the history limits go; then it sleeps until the next tick. A schedule that does
 * not parse fails the Task.
 */
export async function scheduleTick(ctx: TaskContext, task: Task): Promise<Transition> {
  let cron;
  try {
    cron = parseSchedule(task.spec);
  } catch (err) {
    return completion(ctx, task, "Failed", errorMessage(err));
  }
  const now = new Date();
  const since = new Date(task.status?.lastScheduleTime ?? task.metadata.creationTimestamp ?? now.toISOString());
  const tick = task.spec.suspend ? undefined : latestDueTick(cron, since, now);
  if (tick) await runScheduledTick(ctx, task, tick, now);
  await pruneScheduledChildren(ctx, task);
  const next = cron.nextRun(now);
  return {
    status: {
      ...(await childSummary(ctx.store, ctx.data, task)),
      lastScheduleTime: tick?.toISOString() ?? task.status?.lastScheduleTime,
      nextScheduleTime: next?.toISOString(),
    },
    // A suspended schedule sleeps until its spec changes (the watch wakes it).
    after: () => {
      if (next && !task.spec.suspend) ctx.wake(keyOf(task), Math.max(50, next.getTime() - Date.now() + 5));
    },
  };
}

async function runScheduledTick(ctx: TaskContext, task: Task, tick: Date, now: Date): Promise<void> {
  const deadline = (task.spec.startingDeadlineSeconds ?? DEFAULT_STARTING_DEADLINE_SECONDS) * 1000;
  if (now.getTime() - tick.getTime() > deadline) {
    recordEvent(ctx, task, { type: "ScheduleSkipped", severity: "warning", summary: `missed the run of ${tick.toISOString()} by more than the starting deadline` });
    return;
  }
  const children = await scheduledChildren(ctx, task);
  if ((task.spec.concurrencyPolicy ?? "Forbid") === "Forbid" && children.some((c) => !isTerminal(c))) {
    recordEvent(ctx, task, { type: "ScheduleSkipped", summary: `run of ${tick.toISOString()} skipped: the previous run is still active (Forbid)` });
    return;
  }
  const name = scheduledChildName(task.metadata.name, tick);
  const disable = task.metadata.annotations?.[ANNOTATION.disableCoordinationToolInjection];
  const child: Resource<TaskSpec, TaskStatus> = {
    apiVersion: API_VERSION,
    kind: "Task",
    metadata: {
      name,
      namespace: task.metadata.namespace,
      ...parentLink(task, task.metadata.namespace, {
        labels: { [LABEL.scheduledRun]: "true" },
        annotations: disable ? { [ANNOTATION.disableCoordinationToolInjection]: disable } : {},
      }),
    },
    spec: scheduledChildSpec(task.spec),
  };
  try {
    await ctx.store.create(child);
    recordEvent(ctx, task, { type: "ScheduledRunCreated", summary: `created ${name}` });
  } catch (err) {
    // A pass that created it and then lost its status write to a conflict runs again: the run exists.
    if (!(err instanceof OrkaError && err.code === "already_exists")) throw err;
  }
}

/** The schedule's runs, oldest first. */
async function scheduledChildren(ctx: TaskContext, task: Task): Promise<Task[]> {
  const list = await ctx.store.list<TaskSpec, TaskStatus>("Task", {
    namespace: task.metadata.namespace,
    labelSelector: `${childrenOf(task.metadata.name)},${LABEL.scheduledRun}=true`,
  });
  return [...list.items].sort((a, b) => (a.metadata.creationTimestamp ?? "").localeCompare(b.metadata.creationTimestamp ?? "") || a.metadata.name.localeCompare(b.metadata.name));
}

async function pruneScheduledChildren(ctx: TaskContext, task: Task): Promise<void> {
  const children = await scheduledChildren(ctx, task);
  const keep = { Succeeded: task.spec.successfulJobsHistoryLimit ?? 3, Failed: task.spec.failedJobsHistoryLimit ?? 1 };
  for (const phase of ["Succeeded", "Failed"] as const) {
    const finished = children.filter((c) => c.status?.phase === phase);
    for (const old of finished.slice(0, Math.max(0, finished.length - keep[phase]))) {
      await ctx.store.delete("Task", old.metadata.namespace, old.metadata.name).catch(() => undefined);
    }
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
