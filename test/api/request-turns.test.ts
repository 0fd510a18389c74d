import Fastify from "fastify";
import { describe, expect, it } from "vitest";
import { takeTurns, waitForTurn } from "../../src/api/request-turns.ts";

/** Well over what one turn of the event loop lets in. */
const BURST = 48;
/** Requests that take a millisecond each: enough to spend a turn (16 requests and 5 ms). */
const SLOW = 16;

/** Keeps the thread busy for `ms`, as handling a request does. */
function spin(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

/** Handles a request through the turns: now when it may go, else once its turn has come. */
function request(work: () => void): Promise<void> {
  const held = waitForTurn();
  if (!held) {
    work();
    return Promise.resolve();
  }
  return held.then(work);
}

/** Lets the event loop go round, so that a test starts on a turn of its own. */
const nextLoop = () => new Promise((resolve) => setImmediate(resolve));

describe("requests taking turns with the event loop", () => {
  it("lets the loop go round during a burst, and handles every request in the order it came", async () => {
    await nextLoop();
    const order: string[] = [];
    let late: Promise<void> | undefined;
    const handled = Array.from({ length: BURST }, (_, i) =>
      request(() => {
        // A timer armed by the first request, as a worker's call arriving meanwhile would be: it must not wait for the whole burst.
        if (i === 0) setTimeout(() => order.push("timer"), 0);
        // The first few spend the turn; the rest take no time once let in, so a turn they start is not spent.
        if (i < SLOW) spin(1);
        order.push(`request ${i}`);
      }),
    );
    // One more request, coming just after the next turn has let some of the burst in: it waits behind the rest.
    setImmediate(() => {
      late = request(() => order.push("late request"));
    });
    await Promise.all(handled);
    await late;
    const timer = order.indexOf("timer");
    expect(timer).toBeGreaterThan(0);
    expect(timer).toBeLessThan(BURST);
    expect(order.filter((entry) => entry !== "timer")).toEqual([...Array.from({ length: BURST }, (_, i) => `request ${i}`), "late request"]);
  });

  it("lets a held burst in a few requests per turn of the loop", async () => {
    await nextLoop();
    let loops = 0;
    let ticking = true;
    const tick = () => {
      loops++;
      if (ticking) setImmediate(tick);
    };
    setImmediate(tick);
    const loopOf: number[] = [];
    const handled = Array.from({ length: BURST }, (_, i) =>
      request(() => {
        if (i < SLOW) spin(1);
        loopOf.push(loops);
      }),
    );
    await Promise.all(handled);
    ticking = false;
    const perLoop = Object.values(Object.groupBy(loopOf, (loop) => loop)).map((group) => group!.length);
    expect(perLoop.length).toBeGreaterThanOrEqual(3);
    expect(Math.max(...perLoop)).toBeLessThanOrEqual(SLOW);
  });

  it("holds none of more requests than a turn lets in by count alone, when they take no time", async () => {
    await nextLoop();
    expect(Array.from({ length: SLOW + 8 }, () => waitForTurn()).every((held) => held === undefined)).toBe(true);
  });

  it("holds none of a few requests in one turn, however long they take", async () => {
    await nextLoop();
    const held = Array.from({ length: 10 }, () => {
      spin(2);
      return waitForTurn();
    });
    expect(held.every((turn) => turn === undefined)).toBe(true);
  });

  it("holds a burst to its turns as a server's hook on every request", async () => {
    const app = Fastify();
    app.addHook("onRequest", takeTurns);
    const order: string[] = [];
    app.get("/work/:i", async (req) => {
      const i = Number((req.params as { i: string }).i);
      if (i === 0) setTimeout(() => order.push("timer"), 0);
      spin(1);
      order.push(`request ${i}`);
      return "done";
    });
    await app.ready();
    try {
      const replies = await Promise.all(Array.from({ length: BURST }, (_, i) => app.inject({ method: "GET", url: `/work/${i}` })));
      expect(replies.map((reply) => reply.body)).toEqual(Array(BURST).fill("done"));
      expect(order.filter((entry) => entry !== "timer")).toEqual(Array.from({ length: BURST }, (_, i) => `request ${i}`));
      const timer = order.indexOf("timer");
      expect(timer).toBeGreaterThan(0);
      expect(timer).toBeLessThan(BURST);
    } finally {
      await app.close();
    }
  });
});
