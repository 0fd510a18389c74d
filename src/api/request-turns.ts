import type { FastifyInstance } from "fastify";

/** How long requests may be handled one after another before the event loop goes round once. */
const SLICE_MS = 5;

let sliceStartedAt: number | undefined;

/** When the event loop's current slice began: the first request after the loop last went round starts one. */
function sliceStart(): number {
  if (sliceStartedAt === undefined) {
    sliceStartedAt = performance.now();
    setImmediate(() => {
      sliceStartedAt = undefined;
    });
  }
  return sliceStartedAt;
}

/**
 * Undefined while the current slice has time left; once it is spent, settles after the event loop has
 * gone round (and a slice with time left has come).
 */
export function nextTurn(): Promise<void> | undefined {
  if (performance.now() - sliceStart() < SLICE_MS) return undefined;
  return new Promise<void>((resolve) => setImmediate(resolve)).then(nextTurn);
}

/**
 * A burst of requests ready at once (a thousand Task creates, say) would be handled in one turn of the
 * event loop, a second or more during which nothing else is read: not the pooled workers' calls over
 * their IPC channels, not the model's answers, not the timers. So requests take turns: once a few
 * milliseconds have gone on handling them, the rest of the burst waits for the loop to go round, and
 * running Tasks go on while it is admitted (docs/performance.md, the 1,000-Task drain).
 */
export function takeTurnsWithTheEventLoop(app: FastifyInstance): void {
  app.addHook("onRequest", (_request, _reply, done) => {
    const turn = nextTurn();
    if (turn) void turn.then(() => done());
    else done();
  });
}
