import { randomBytes, randomUUID } from "node:crypto";
import { ANNOTATION } from "../../resources/meta.ts";
import { attemptEnv } from "../../runner/attempt-config.ts";
import type { AttemptDirs, AttemptFiles } from "../../runner/runner.ts";
import { hashToken } from "../../store/data-store.ts";
import type { StartPlan } from "../admission.ts";
import type { Task } from "../../resources/task.ts";
import { errorMessage } from "../../util/errors.ts";
import { buildAttemptConfig, offeredToolNames, secretValuesOf, transactionTokenOf } from "./attempt-config.ts";
import { completion } from "./completion.ts";
import { setCondition } from "./conditions.ts";
import { recordEvent, type TaskContext } from "./context.ts";
import { keyOf } from "./keys.ts";
import type { Transition } from "./status.ts";
import { defaultTimeoutNote, timeoutMs } from "./timeout.ts";
import { prepareWorkspace, type WorkspacePreparation } from "./workspace.ts";

/**
 * Starts the Task's next attempt: its directories and files, its configuration, its record in the
 * store; the status says Running, and then the runner starts it.
 */
export async function startAttempt(ctx: TaskContext, task: Task, plan: StartPlan): Promise<Transition> {
  const { namespace, name, uid } = task.metadata;
  const number = (task.status?.attempts ?? 0) + 1;
  const attemptId = `${name}-${number}-${randomUUID().slice(0, 8)}`;
  const token = randomBytes(32).toString("base64url");
  // A resumed run continues in the lost attempt's directories (its workspace files are part of the run).
  const resumeRun = task.status?.resuming ? task.status.journalRun : undefined;
  const lostAttempt = resumeRun !== undefined ? task.status?.jobName : undefined;
  const prepared = await prepareDirs(ctx, task, attemptId, lostAttempt);
  if ("failure" in prepared) return completion(ctx, task, "Failed", prepared.failure);
  const { dirs, files, workspace } = prepared;
  if (lostAttempt) ctx.attempts.disown(lostAttempt);
  // A fork's first attempt starts from a copy of the source run up to the chosen step.
  const fork = number === 1 ? forkSourceOf(task) : undefined;
  if (fork) ctx.journal.copyRun(fork, { namespace, task: name, taskUid: uid!, attempt: number }, number);
  const journal = { run: resumeRun ?? number, resume: resumeRun !== undefined || fork !== undefined };
  const config = await buildAttemptConfig(ctx, task, plan, { id: attemptId, number, token, dirs, journal });
  ctx.secrets.remember(namespace, name, attemptId, [...(await secretValuesOf(ctx.store, task, config)), ...(workspace?.secrets ?? [])]);
  // The store learns of the attempt before it exists, so a crash in between is seen as a lost attempt.
  ctx.data.createAttempt({ id: attemptId, namespace, task: name, taskUid: uid!, number, allowedTools: offeredToolNames(plan) }, hashToken(token));
  // The broker's per-call checks compare against what the session was given now, not what the worker says.
  if (plan.agent) ctx.data.recordSessionTools(attemptId, plan.agent.brokered);
  return {
    status: {
      phase: "Running",
      startTime: new Date().toISOString(),
      attempts: number,
      jobName: attemptId,
      message: [resumeRun !== undefined ? `attempt ${number} resuming run ${resumeRun}` : `attempt ${number} running`, defaultTimeoutNote(task)].filter(Boolean).join("; "),
      retryAfter: undefined,
      journalRun: journal.run,
      resuming: undefined,
      ...workspace?.status,
      conditions: setCondition(task.status?.conditions, { type: "JobCreated", status: "True", reason: "WorkerStarted", message: attemptId }),
    },
    after: (running) => {
      // Notices describe the Task's configuration, not this attempt: each is said once per Task, not on every run and iteration.
      const said = plan.notices.length > 0 ? new Set(ctx.data.listEvents(namespace, name, { type: "Warning" }).map((e) => e.summary)) : new Set<string>();
      for (const notice of plan.notices) if (!said.has(notice)) recordEvent(ctx, running, { type: "Warning", severity: "warning", summary: notice });
      ctx.attempts.start(attemptId, { namespace, task: name, number }, attemptEnv(config));
      recordEvent(ctx, running, { type: "AttemptStarted", summary: `attempt ${number} started` });
      const timeout = timeoutMs(running);
      if (timeout !== undefined) ctx.wake(keyOf(running), timeout + 10);
    },
    // The Task changed meanwhile (cancelled, say): this attempt never starts, and leaves nothing behind.
    undo: async () => {
      ctx.data.finishAttempt(attemptId, { state: "killed", reason: "the Task changed while its attempt was being set up" });
      ctx.secrets.forget(namespace, name);
      if (lostAttempt) await ctx.runner.adopt(attemptId, lostAttempt, files);
      else await ctx.runner.cleanup(attemptId);
    },
  };
}

interface PreparedDirs {
  dirs: AttemptDirs;
  files: AttemptFiles;
  workspace?: WorkspacePreparation;
}

/**
 * The attempt's directories with its files, the repository checked out in its workspace (a resumed
 * attempt takes over its lost attempt's), or why the workspace could not be had.
 */
async function prepareDirs(ctx: TaskContext, task: Task, attemptId: string, lostAttempt: string | undefined): Promise<PreparedDirs | { failure: string }> {
  let workspace: WorkspacePreparation | undefined;
  try {
    workspace = await prepareWorkspace(ctx, task);
  } catch (err) {
    return { failure: `could not prepare the workspace: ${errorMessage(err)}` };
  }
  const files: AttemptFiles = { transactionToken: await transactionTokenOf(ctx.store, task), checkout: workspace?.plan };
  try {
    const dirs = lostAttempt ? await ctx.runner.adopt(lostAttempt, attemptId, files) : await ctx.runner.prepare(attemptId, files);
    return { dirs, files, workspace };
  } catch (err) {
    if (!workspace) throw err;
    await ctx.runner.cleanup(attemptId);
    return { failure: `could not check out the workspace: ${errorMessage(err)}` };
  }
}

/** The run and step a forked Task continues from (`orka.ai/forked-from: <task>/<uid>/<run>/<step>`). */
function forkSourceOf(task: Task): { taskUid: string; run: number; upTo: number } | undefined {
  const match = /^[^/]+\/([^/]+)\/(\d+)\/(\d+)$/.exec(task.metadata.annotations?.[ANNOTATION.forkedFrom] ?? "");
  return match ? { taskUid: match[1], run: Number(match[2]), upTo: Number(match[3]) } : undefined;
}
