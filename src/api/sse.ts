import type { FastifyReply, FastifyRequest } from "fastify";

export interface SseStream {
  send(event: string, data: unknown, id?: number): void;
  close(): void;
  onClose(listener: () => void): void;
}

/** Takes over the response for Server-Sent Events; a comment every 15 s keeps proxies from closing it. */
export function openSse(request: FastifyRequest, reply: FastifyReply): SseStream {
  reply.hijack();
  const raw = reply.raw;
  raw.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive", "x-accel-buffering": "no" });
  raw.write(": connected\n\n");
  const heartbeat = setInterval(() => raw.write(": keep-alive\n\n"), 15_000);
  const listeners: (() => void)[] = [];
  let closed = false;
  const finish = () => {
    if (closed) return;
    closed = true;
    clearInterval(heartbeat);
    for (const listener of listeners) listener();
  };
  request.raw.on("close", finish);
  return {
    send(event, data, id) {
      if (closed) return;
      raw.write(`${id !== undefined ? `id: ${id}\n` : ""}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
    },
    close() {
      finish();
      raw.end();
    },
    onClose(listener) {
      listeners.push(listener);
    },
  };
}
