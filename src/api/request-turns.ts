import type { FastifyInstance } from "fastify";

/**
 * A burst is this many requests handled in one turn of the event loop; under a steady load of many
 * clients a turn rarely handles more than a few.
 */
const BURST_REQUESTS = 16;
/** How long a burst may keep the event loop before the rest of it waits for the loop to go round. */
const SLICE_MS = 5;

/** What this turn of the event loop has handled so far: since when, and how many requests. */
let slice: { startedAt: number; requests: number } | undefined;

/** The current turn's slice: the first request after the loop last went round starts one. */
function currentSlice(): { startedAt: number; requests: number } {
  if (!slice) {
    slice = { startedAt: performance.now(), requests: 0 };
    setImmediate(() => {
      slice = undefined;
    });
  }
  return slice;
}

/**
 * Undefined when this request may be handled now; once a burst has had its slice, settles after the
 * event loop has gone round (and this request's turn has come).
 */
export function nextTurn(): Promise<void> | undefined {
  const current = currentSlice();
  if (current.requests < BURST_REQUESTS || performance.now() - current.startedAt < SLICE_MS) {
    current.requests++;
    return undefined;
  }
  return new Promise<void>((resolve) => setImmediate(resolve)).then(nextTurn);
}

/**
 * A burst of requests ready at once (a thousand Task creates, say) would be handled in one turn of the
 * event loop, a second or more during which nothing else is read: not the pooled workers' calls over
 * their IPC channels, not the timers. So a burst takes turns: once it has had a few milliseconds, the
 * rest of it waits for the loop to go round, and running Tasks go on while it is admitted
 * (docs/performance.md, the 1,000-Task drain).
 */
export function takeTurnsWithTheEventLoop(app: FastifyInstance): void {
  app.addHook("onRequest", (_request, _reply, done) => {
    const turn = nextTurn();
    if (turn) void turn.then(() => done());
    else done();
  });
}
