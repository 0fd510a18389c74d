import type { onRequestHookHandler } from "fastify";

/** Requests a turn of the event loop always lets in: under a steady load a turn rarely handles more. */
const REQUESTS_PER_TURN = 16;
/** Past its REQUESTS_PER_TURN, a turn lets requests in for this long, counted from its first request. */
const TURN_MS = 5;

/** What the current turn of the event loop has let in: since when, and how many requests. */
interface Turn {
  startedAt: number;
  requests: number;
}

// One event loop serves every server of the process, so the turn and the line are the process's own.
let turn: Turn | undefined;
/** Requests held for a later turn, in the order they came. */
const line: (() => void)[] = [];

function startTurn(): Turn {
  turn = { startedAt: performance.now(), requests: 0 };
  // Runs once the loop has gone round: the next turn lets in the first of the line.
  setImmediate(endTurn);
  return turn;
}

function endTurn(): void {
  turn = undefined;
  if (line.length === 0) return;
  const next = startTurn();
  for (const letIn of line.splice(0, REQUESTS_PER_TURN)) {
    next.requests++;
    letIn();
  }
}

function spent({ startedAt, requests }: Turn): boolean {
  return requests >= REQUESTS_PER_TURN && performance.now() - startedAt >= TURN_MS;
}

/**
 * Undefined when the request may be handled now; otherwise settles once its turn has come, after the
 * requests held before it.
 */
export function waitForTurn(): Promise<void> | undefined {
  const current = turn ?? startTurn();
  if (line.length === 0 && !spent(current)) {
    current.requests++;
    return undefined;
  }
  return new Promise<void>((resolve) => line.push(resolve));
}

/**
 * A burst of requests ready at once (a thousand Task creates, say) would be handled in one turn of the
 * event loop, a second or more during which nothing else is read: not the pooled workers' calls over
 * their IPC channels, not the timers. So a busy turn holds the rest of a burst for the next ones, and
 * running Tasks go on while it is admitted (docs/performance.md, the 1,000-Task drain). For the public
 * surfaces only: a worker's calls and the health probes are never held behind a burst.
 */
export const takeTurns: onRequestHookHandler = (_request, _reply, done) => {
  const held = waitForTurn();
  if (held) void held.then(() => done());
  else done();
};
