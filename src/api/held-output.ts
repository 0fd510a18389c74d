import type { ServerResponse } from "node:http";
import type { FastifyInstance, onSendHookHandler } from "fastify";
import type { OutputGate } from "../store/output-gate.ts";

declare module "fastify" {
  interface FastifyInstance {
    /** Holds what the server sends until the writes made before it are committed. */
    outputGate: OutputGate;
  }
}

/**
 * Every reply waits for the commit of the writes made before it. The hold is each route's own last
 * `onSend` hook, so it runs after every other one, including any that writes; a not-found handler, which
 * has no route, gets it from the instance's hooks. Register
 * it before any route. A route that takes the response over writes it through `heldStream`. (Fastify
 * answers a URL its router cannot read before any hook or handler runs: that answer tells of nothing.)
 */
export function holdRepliesUntilCommitted(app: FastifyInstance, gate: OutputGate): void {
  app.decorate("outputGate", gate);
  const hold: onSendHookHandler = (_request, _reply, payload, done) => gate.release(() => done(null, payload));
  app.addHook("onRoute", (route) => {
    route.onSend = [...[route.onSend ?? []].flat(), hold];
  });
  app.addHook("onSend", (request, _reply, payload, done) => (request.is404 ? gate.release(() => done(null, payload)) : done(null, payload)));
}

/** A taken-over response written through the gate: its head, each write and its end leave in order, each after the writes made before it are committed. */
export interface HeldStream {
  writeHead(status: number, headers: Record<string, string>): void;
  write(text: string): void;
  end(text?: string): void;
}

export function heldStream(gate: OutputGate, raw: ServerResponse): HeldStream {
  const open = () => !raw.destroyed && !raw.writableEnded;
  return {
    writeHead: (status, headers) => gate.release(() => open() && !raw.headersSent && raw.writeHead(status, headers)),
    write: (text) => gate.release(() => open() && raw.write(text)),
    end: (text) => gate.release(() => open() && raw.end(text)),
  };
}
