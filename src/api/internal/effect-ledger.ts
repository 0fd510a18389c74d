import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { StepInput, StepOwner } from "../../store/journal-store.ts";
import { callerGone } from "./worker-calls.ts";
import { killAtJournalStep } from "../../util/fault-injection.ts";
import { sha256Hex } from "../../util/hash.ts";
import { OrkaError } from "../../util/errors.ts";
import type { ApiContext } from "../context.ts";
import { bearerToken } from "../auth.ts";
import { writeSteps, type JournalWrite } from "./journal-routes.ts";

declare module "fastify" {
  interface FastifyRequest {
    /** The effect-ledger key of a worker's tool call, scoped to its Task. */
    effectKey?: string;
    /** The journal step a route asks to be written with the call's recorded reply, in the same commit. */
    resultStep?: { owner: StepOwner; step: StepInput };
  }
  interface FastifyContextConfig {
    /** A route's last check of a new keyed call, before the ledger records it as started (a refusal leaves no record of the call). */
    beforeEffect?: (request: FastifyRequest) => void;
    /** Journal steps a new keyed call carries (scrubbed by then, as every body a worker sends), written in the commit that records it as started. */
    journalFirst?: (request: FastifyRequest) => JournalWrite | undefined;
  }
}

interface RecordedReply {
  status: number;
  type?: string;
  body: string;
}

/** Routes whose calls reach a service outside Orka: one that started and left no reply may have acted. */
const REMOTE_EFFECT_ROUTES = new Set(["/internal/v1/tools/:ns/:task/:name", "/internal/v1/github/:ns/:task/:tool"]);

/**
 * The effect ledger (issue: crash-exact durability). A worker sends each tool call with an
 * `Idempotency-Key` (Task uid, run, call index, argument digest). The first call is recorded as
 * started, then with its reply; the same call again — a resumed attempt — gets the recorded reply
 * and acts on nothing. A custom Tool call that started but never recorded a reply may have reached
 * the remote service, so it is reported as `outcome unknown` instead of being sent twice.
 */
export function registerEffectLedger(app: FastifyInstance, ctx: ApiContext): void {
  app.addHook("preHandler", async (request, reply) => {
    const key = request.headers["idempotency-key"];
    if (typeof key !== "string") return;
    if (!/^[0-9a-f]{64}$/.test(key)) throw new OrkaError("invalid_argument", "Idempotency-Key must be 64 hex characters");
    const attempt = workerAttempt(ctx, request);
    if (!attempt) return; // the route refuses it
    const scoped = `${attempt.taskUid}:${key}`;
    const effect = ctx.journal.effect(scoped);
    if (effect?.state === "done" && effect.result) {
      const recorded = JSON.parse(effect.result) as RecordedReply;
      return reply.code(recorded.status).header("content-type", recorded.type ?? "application/json").header("orka-replayed", "true").send(recorded.body);
    }
    if (effect?.state === "started" && REMOTE_EFFECT_ROUTES.has(request.routeOptions.url ?? "")) {
      const params = request.params as { name?: string; tool?: string };
      return reply.send({
        result: `outcome unknown: this call of ${params.name ?? params.tool} started earlier and its reply was not recorded (it may still be running, or the control plane went down in the middle of it), so it may or may not have reached the service. It was not sent again; check before repeating it.`,
      });
    }
    // The fault point before a step the control plane writes for the worker: before the commit that starts the call.
    const resultSeq = (request.body as { resultStep?: { seq?: unknown } } | undefined)?.resultStep?.seq;
    if (typeof resultSeq === "number") killAtJournalStep("server", attempt.task, resultSeq);
    const begin = () => {
      request.routeOptions.config.beforeEffect?.(request);
      ctx.journal.beginEffect({ namespace: attempt.namespace, task: attempt.task }, scoped, request.routeOptions.url ?? request.url);
    };
    // The journal steps a call carries and its start are one commit: a call refused here writes neither.
    const carried = request.routeOptions.config.journalFirst?.(request);
    if (carried) writeSteps(ctx, attempt, carried, { inSameCommit: begin });
    else begin();
    request.effectKey = scoped;
    // The route acts once the call's start is committed: a crash before that leaves neither.
    await ctx.gate.settled();
  });

  app.addHook("onSend", async (request, reply, payload) => {
    // Transient failures (5xx) are not outcomes: the same call may be tried again.
    if (!request.effectKey || reply.statusCode >= 500 || !(typeof payload === "string" || payload === undefined || payload === null)) return payload;
    const record = (body: string, resultStep?: FastifyRequest["resultStep"]) =>
      ctx.journal.finishEffect(request.effectKey!, JSON.stringify({ status: reply.statusCode, type: reply.getHeader("content-type")?.toString(), body } satisfies RecordedReply), resultStep);
    const step = request.resultStep;
    if (!step) {
      record(payload ?? "");
      return payload;
    }
    if (reply.statusCode === 200 && stepStillWanted(ctx, request, reply, step.owner)) {
      try {
        record(payload as string, step);
        killAtJournalStep("server-uncommitted", step.owner.task, step.step.seq);
        return payload;
      } catch (err) {
        if (!(err instanceof OrkaError && err.code === "conflict")) throw err;
      }
    }
    // The step is not written after all (the attempt ended or its worker gave up meanwhile, or the run moved
    // on): the reply is recorded, and sent, without the promise that it was.
    const unjournalled = withoutJournalled(payload as string);
    record(unjournalled);
    return unjournalled;
  });
}

/** A result step is written only for the attempt that asked, while it runs and still waits for the answer. */
function stepStillWanted(ctx: ApiContext, request: FastifyRequest, reply: FastifyReply, owner: StepOwner): boolean {
  const attempt = workerAttempt(ctx, request);
  return attempt?.taskUid === owner.taskUid && attempt.number === owner.attempt && !callerGone(request, reply).aborted;
}

/** A tool call's reply (a JSON object) without its `journalled` flag. */
function withoutJournalled(payload: string): string {
  const { journalled: _, ...answer } = JSON.parse(payload) as Record<string, unknown>;
  return JSON.stringify(answer);
}

/** The caller's running attempt, or undefined: the route itself refuses a bad credential with the right message. */
export function workerAttempt(ctx: ApiContext, request: FastifyRequest) {
  let token: string;
  try {
    token = bearerToken(request);
  } catch {
    return undefined;
  }
  const attempt = ctx.data.attemptByTokenHash(sha256Hex(token));
  return attempt?.state === "running" ? attempt : undefined;
}
