import type { FastifyInstance } from "fastify";
import type { WatchEvent } from "../../store/resource-store.ts";
import { namespaceOf, type ApiContext } from "../context.ts";
import { openSse } from "../sse.ts";

/**
 * `GET /api/v1/watch/tasks` (SSE): the namespace's Tasks once, as `ADDED` events ended by `synced`,
 * then every change as it is written (`ADDED`, `MODIFIED`, `DELETED`), so a page that shows counts
 * follows them without listing every Task again.
 */
export function registerTaskWatch(app: FastifyInstance, ctx: ApiContext): void {
  app.get("/api/v1/watch/tasks", async (request, reply) => {
    const namespace = namespaceOf(request);
    const stream = openSse(request, reply);
    const send = (event: WatchEvent) => stream.send(event.type, event.object);
    // Changes written while the list is read wait for it; the store reports a change as it writes it, so they are newer.
    let backlog: WatchEvent[] | undefined = [];
    const unsubscribe = ctx.store.watch((event) => {
      if (event.object.kind !== "Task" || event.object.metadata.namespace !== namespace) return;
      if (backlog) backlog.push(event);
      else send(event);
    });
    stream.onClose(unsubscribe);
    const { items } = await ctx.store.list("Task", { namespace });
    for (const task of items) stream.send("ADDED", task);
    stream.send("synced", { count: items.length });
    for (const event of backlog) send(event);
    backlog = undefined;
  });
}
