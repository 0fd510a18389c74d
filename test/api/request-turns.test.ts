import Fastify from "fastify";
import { describe, expect, it } from "vitest";
import { nextTurn, takeTurnsWithTheEventLoop } from "../../src/api/request-turns.ts";

/** Well over a burst's share of one turn. */
const BURST = 48;

/** Keeps the thread busy for `ms`, as handling a request does. */
function spin(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

/**
 * A request's work in a burst: 1 ms of it. The first arms a timer, as a worker's call or a model's
 * answer arriving meanwhile would be: it must not wait for the whole burst.
 */
function work(i: number, order: string[]): void {
  if (i === 0) setTimeout(() => order.push("timer"), 0);
  spin(1);
  order.push(`request ${i}`);
}

/** The timer ran while the burst was still being handled, and every request was handled, in order. */
function expectTurnsTaken(order: string[]): void {
  expect(order.filter((entry) => entry !== "timer")).toEqual(Array.from({ length: BURST }, (_, i) => `request ${i}`));
  const timer = order.indexOf("timer");
  expect(timer).toBeGreaterThan(0);
  expect(timer).toBeLessThan(order.length - 1);
}

describe("requests taking turns with the event loop", () => {
  it("lets the loop go round once a few ms went on a burst handled in one turn", async () => {
    const order: string[] = [];
    const handled: Promise<void>[] = [];
    for (let i = 0; i < BURST; i++) {
      const turn = nextTurn();
      if (turn) handled.push(turn.then(() => work(i, order)));
      else work(i, order);
    }
    await Promise.all(handled);
    expectTurnsTaken(order);
  });

  it("holds none of a few requests handled in one turn, however long they take", async () => {
    await new Promise((resolve) => setImmediate(resolve));
    const held = Array.from({ length: 10 }, () => {
      spin(2);
      return nextTurn();
    });
    expect(held.every((turn) => turn === undefined)).toBe(true);
  });

  it("holds no request while the loop goes round freely", async () => {
    await new Promise((resolve) => setImmediate(resolve));
    expect(nextTurn()).toBeUndefined();
  });

  it("holds every request of the API to it", async () => {
    const app = Fastify();
    takeTurnsWithTheEventLoop(app);
    const order: string[] = [];
    app.get("/work/:i", async (request) => {
      work(Number((request.params as { i: string }).i), order);
      return "done";
    });
    await app.ready();
    try {
      const replies = await Promise.all(Array.from({ length: BURST }, (_, i) => app.inject({ method: "GET", url: `/work/${i}` })));
      expect(replies.map((reply) => reply.body)).toEqual(Array(BURST).fill("done"));
      expectTurnsTaken(order);
    } finally {
      await app.close();
    }
  });
});
