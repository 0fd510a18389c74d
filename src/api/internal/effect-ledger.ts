import type { StepOwner } from "../../store/journal-store.ts";
import { killAtJournalStep } from "../../util/fault-injection.ts";
import { OrkaError } from "../../util/errors.ts";
import type { ApiContext } from "../context.ts";
import { runningAttemptOf } from "../auth.ts";
import { writeSteps } from "./journal-write.ts";
import { jsonAnswer, WORKER_API_PREFIX, type WorkerAnswer, type WorkerRequest, type WorkerRoute } from "./worker-route.ts";

interface RecordedReply {
  status: number;
  type?: string;
  body: string;
}

/** Routes whose calls reach a service outside Orka: one that started and left no reply may have acted. */
const REMOTE_EFFECT_ROUTES = new Set([`${WORKER_API_PREFIX}/tools/:ns/:task/:name`, `${WORKER_API_PREFIX}/github/:ns/:task/:tool`]);

/*
 * The effect ledger (see docs/durability.md). A worker sends each tool call with an `Idempotency-Key`
 * (Task uid, run, call index, argument digest). The first call is recorded as started, then with its
 * reply; the same call again — a resumed attempt — gets the recorded reply and acts on nothing. A custom
 * Tool call that started but never recorded a reply may have reached the remote service, so it is
 * reported as `outcome unknown` instead of being sent twice.
 */

/**
 * Before the route runs: a keyed call answered from its record, or recorded as started (with the journal
 * steps it carries, in one commit) and undefined once that commit is made: the route acts only then, so a
 * crash before it leaves neither.
 */
export async function openEffect(ctx: ApiContext, route: WorkerRoute, request: WorkerRequest): Promise<WorkerAnswer | undefined> {
  const key = request.headers["idempotency-key"];
  if (typeof key !== "string") return undefined;
  if (!/^[0-9a-f]{64}$/.test(key)) throw new OrkaError("invalid_argument", "Idempotency-Key must be 64 hex characters");
  const attempt = runningAttemptOf(ctx.data, request);
  if (!attempt) return undefined; // the route refuses it
  const scoped = `${attempt.taskUid}:${key}`;
  const effect = ctx.journal.effect(scoped);
  if (effect?.state === "done" && effect.result) {
    const recorded = JSON.parse(effect.result) as RecordedReply;
    return { status: recorded.status, type: recorded.type ?? "application/json", text: recorded.body, replayed: true };
  }
  if (effect?.state === "started" && REMOTE_EFFECT_ROUTES.has(request.route)) {
    const called = request.params.name ?? request.params.tool;
    return jsonAnswer(200, {
      result: `outcome unknown: this call of ${called} started earlier and its reply was not recorded (it may still be running, or the control plane went down in the middle of it), so it may or may not have reached the service. It was not sent again; check before repeating it.`,
    });
  }
  // The fault point before a step the control plane writes for the worker: before the commit that starts the call.
  const resultSeq = (request.body as { resultStep?: { seq?: unknown } } | undefined)?.resultStep?.seq;
  if (typeof resultSeq === "number") killAtJournalStep("server", attempt.task, resultSeq);
  const begin = () => {
    route.beforeEffect?.(request);
    ctx.journal.beginEffect({ namespace: attempt.namespace, task: attempt.task }, scoped, request.route);
  };
  // The journal steps a call carries and its start are one commit: a call refused here writes neither.
  const carried = route.journalFirst?.(request);
  if (carried) writeSteps(ctx, attempt, carried, { inSameCommit: begin });
  else begin();
  request.effectKey = scoped;
  await ctx.gate.settled();
  return undefined;
}

/**
 * After the route: its answer recorded as the call's outcome, with the result step the route asked for
 * in the same commit. Transient failures (5xx) are not outcomes: the same call may be tried again.
 */
export function closeEffect(ctx: ApiContext, request: WorkerRequest, answer: WorkerAnswer): WorkerAnswer {
  const effectKey = request.effectKey;
  if (!effectKey || answer.status >= 500) return answer;
  const record = (text: string, resultStep?: WorkerRequest["resultStep"]) =>
    ctx.journal.finishEffect(effectKey, JSON.stringify({ status: answer.status, type: answer.type, body: text } satisfies RecordedReply), resultStep);
  const step = request.resultStep;
  if (!step) {
    record(answer.text);
    return answer;
  }
  if (answer.status === 200 && stepStillWanted(ctx, request, step.owner)) {
    try {
      record(answer.text, step);
      killAtJournalStep("server-uncommitted", step.owner.task, step.step.seq);
      return answer;
    } catch (err) {
      if (!(err instanceof OrkaError && err.code === "conflict")) throw err;
    }
  }
  // The step is not written after all (the attempt ended or its worker gave up meanwhile, or the run moved
  // on): the reply is recorded, and sent, without the promise that it was.
  const unjournalled = withoutJournalled(answer.text);
  record(unjournalled);
  return { ...answer, text: unjournalled };
}

/** A result step is written only for the attempt that asked, while it runs and still waits for the answer. */
function stepStillWanted(ctx: ApiContext, request: WorkerRequest, owner: StepOwner): boolean {
  const attempt = runningAttemptOf(ctx.data, request);
  return attempt?.taskUid === owner.taskUid && attempt.number === owner.attempt && !request.gone().aborted;
}

/** A tool call's reply (a JSON object) without its `journalled` flag. */
function withoutJournalled(payload: string): string {
  const { journalled: _, ...answer } = JSON.parse(payload) as Record<string, unknown>;
  return JSON.stringify(answer);
}
