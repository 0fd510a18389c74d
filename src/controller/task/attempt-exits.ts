import { LOST_EXIT_CODE } from "../../runner/runner.ts";
import type { Task } from "../../resources/task.ts";
import { recordEvent, type TaskContext } from "./context.ts";
import { MAX_RESUMES } from "./decide.ts";
import { keyOf } from "./keys.ts";
import type { Transition } from "./status.ts";
import type { NextStep } from "./steps.ts";

/** The store believed the attempt running, the runner has no such attempt: it is lost, and the Task is looked at again now. */
export function lose(ctx: TaskContext, task: Task, { attemptId }: Extract<NextStep, { kind: "lose" }>): Transition {
  ctx.data.finishAttempt(attemptId, { state: "failed", exitCode: LOST_EXIT_CODE, reason: "worker lost" });
  return { after: () => ctx.wake(keyOf(task)) };
}

/** A failed attempt under a retryPolicy: its directories go, and the Task waits in Pending for its backoff. */
export async function retry(ctx: TaskContext, task: Task, step: Extract<NextStep, { kind: "retry" }>): Promise<Transition> {
  await ctx.attempts.releaseExited(task);
  const attempts = task.status?.attempts ?? 0;
  return {
    status: { phase: "Pending", jobName: undefined, message: undefined, resultRef: undefined, retryAfter: step.retryAfter, queuedAt: step.retryAfter },
    after: (written) =>
      recordEvent(ctx, written, { type: "TaskRetrying", severity: "warning", summary: `attempt ${attempts} failed (${step.failure}); retry in ${step.delayMs} ms` }),
  };
}

/** A lost attempt of an ai Task: the next attempt continues its journal run in its directories. */
export function resume(ctx: TaskContext, task: Task, { lost, resumes }: Extract<NextStep, { kind: "resume" }>): Transition {
  const why = lost.reason ?? "worker lost";
  return {
    status: { phase: "Pending", resuming: true, resumes, message: `resuming run ${task.status!.journalRun} after: ${why}` },
    after: (written) =>
      recordEvent(ctx, written, {
        type: "AttemptLost",
        severity: "warning",
        summary: `attempt ${lost.number} lost (${why}); resuming from the journal (resume ${resumes} of at most ${MAX_RESUMES})`,
      }),
  };
}
