import Fastify, { type FastifyInstance } from "fastify";
import { afterEach, describe, expect, it } from "vitest";
import { heldStream, holdRepliesUntilCommitted } from "../../src/api/held-output.ts";
import { openSse, registerSseStreams } from "../../src/api/sse.ts";
import { HeldGate } from "../helpers/held-gate.ts";

/** Lets a few turns of the event loop pass: time enough for anything not held to be answered. */
async function turns(count = 5): Promise<void> {
  for (let i = 0; i < count; i++) await new Promise((resolve) => setImmediate(resolve));
}

describe("what the API sends, held until the writes before it are committed", () => {
  let app: FastifyInstance;
  let gate: HeldGate;
  afterEach(async () => {
    gate.open();
    await app.close();
  });

  /** Answers `path` with inject, noting when the answer arrives. */
  function ask(path: string) {
    const answer = { arrived: false, response: app.inject(path) };
    void answer.response.then(() => (answer.arrived = true));
    return answer;
  }

  function build(routes: (app: FastifyInstance) => void): void {
    gate = new HeldGate();
    app = Fastify();
    holdRepliesUntilCommitted(app, gate);
    registerSseStreams(app);
    void app.register(async (child) => routes(child));
  }

  it("holds a reply until the commit, after every other onSend hook, including one that writes", async () => {
    build((child) => {
      // As the effect ledger does: it records the reply as it goes out.
      child.addHook("onSend", async (_request, _reply, payload) => {
        gate.close();
        return payload;
      });
      child.get("/answer", async () => ({ answer: 42 }));
    });
    const answer = ask("/answer");
    await turns();
    expect(answer.arrived).toBe(false);
    gate.open();
    expect((await answer.response).json()).toEqual({ answer: 42 });
  });

  it("holds a not-found reply too", async () => {
    build((child) => child.get("/answer", async () => ({ answer: 42 })));
    gate.close();
    const answer = ask("/missing");
    await turns();
    expect(answer.arrived).toBe(false);
    gate.open();
    expect((await answer.response).statusCode).toBe(404);
  });

  it("sends a reply at once when no write waits", async () => {
    build((child) => child.get("/answer", async () => ({ answer: 42 })));
    expect((await app.inject("/answer")).json()).toEqual({ answer: 42 });
  });

  it("holds a taken-over response's head, writes and end, and sends them in order", async () => {
    build((child) =>
      child.get("/stream", (request, reply) => {
        reply.hijack();
        const out = heldStream(request.server.outputGate, reply.raw);
        gate.close();
        out.writeHead(200, { "content-type": "text/plain" });
        out.write("one ");
        out.end("two");
      }),
    );
    const answer = ask("/stream");
    await turns();
    expect(answer.arrived).toBe(false);
    gate.open();
    const response = await answer.response;
    expect([response.statusCode, response.headers["content-type"], response.body]).toEqual([200, "text/plain", "one two"]);
  });

  it("holds an event stream's events and its end", async () => {
    build((child) =>
      child.get("/events", (request, reply) => {
        gate.close();
        const stream = openSse(request, reply);
        stream.send("told", { n: 1 }, 1);
        stream.close();
      }),
    );
    const answer = ask("/events");
    await turns();
    expect(answer.arrived).toBe(false);
    gate.open();
    const response = await answer.response;
    expect(response.headers["content-type"]).toBe("text/event-stream");
    expect(response.body).toBe(': connected\n\nid: 1\nevent: told\ndata: {"n":1}\n\n');
  });
});
