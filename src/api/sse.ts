import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { heldStream } from "./held-output.ts";

export interface SseStream {
  send(event: string, data: unknown, id?: number): void;
  close(): void;
  /** Runs once when the stream ends, however it ends; at once when it has already ended. */
  onClose(listener: () => void): void;
}

const HEARTBEAT_MS = 15_000;
/** A client that reads slower than this much is written gets cut off, so it cannot make the server buffer without limit. */
const MAX_UNREAD_SSE_BYTES = 1024 * 1024;

declare module "fastify" {
  interface FastifyInstance {
    /** The server's open SSE streams, ended when it closes. */
    sseStreams: Set<SseStream>;
  }
}

/**
 * Keeps count of the server's SSE streams and ends them all when it closes: a stream never ends by
 * itself, and the server would otherwise wait for every open page to go away.
 */
export function registerSseStreams(app: FastifyInstance): void {
  app.decorate("sseStreams", new Set<SseStream>());
  app.addHook("preClose", async () => {
    for (const stream of app.sseStreams) stream.close();
  });
}

/**
 * Takes over the response for Server-Sent Events; a comment every 15 s keeps proxies from closing it.
 * A client gone before the stream opens (it left during an async hook) gets a stream that is already closed.
 */
export function openSse(request: FastifyRequest, reply: FastifyReply): SseStream {
  reply.hijack();
  const raw = reply.raw;
  const gate = request.server.outputGate;
  const open = request.server.sseStreams;
  const listeners: (() => void)[] = [];
  let closed = false;
  let heartbeat: NodeJS.Timeout | undefined;
  let corked = false;
  // Events tell of writes: each leaves once they are committed, in order, and so does the stream's end.
  const write = (text: string) => {
    if (!closed) gate.release(() => writeNow(text));
  };
  const writeNow = (text: string) => {
    if (raw.destroyed || raw.writableEnded) return;
    // What is written in one turn of the event loop (a batch of events) leaves in one socket write.
    if (!corked) {
      corked = true;
      raw.cork();
      process.nextTick(() => {
        corked = false;
        raw.uncork();
      });
    }
    raw.write(text);
    if (raw.writableLength > MAX_UNREAD_SSE_BYTES) stream.close();
  };
  const finish = () => {
    if (closed) return;
    closed = true;
    clearInterval(heartbeat);
    open.delete(stream);
    for (const listener of listeners.splice(0)) listener();
  };
  const stream: SseStream = {
    send(event, data, id) {
      write(`${id !== undefined ? `id: ${id}\n` : ""}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
    },
    close() {
      finish();
      gate.release(() => {
        if (raw.destroyed) return;
        // A client that stopped reading would hold an ended response open until it reads it all.
        if (raw.writableLength > MAX_UNREAD_SSE_BYTES) raw.destroy();
        else raw.end();
      });
    },
    onClose(listener) {
      if (closed) listener();
      else listeners.push(listener);
    },
  };
  if (request.raw.destroyed || raw.destroyed || raw.socket?.destroyed) {
    closed = true;
    raw.destroy();
    return stream;
  }
  open.add(stream);
  raw.on("close", finish);
  heldStream(gate, raw).writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive", "x-accel-buffering": "no" });
  write(": connected\n\n");
  heartbeat = setInterval(() => write(": keep-alive\n\n"), HEARTBEAT_MS);
  return stream;
}
