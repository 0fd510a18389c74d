import type { FastifyInstance, FastifyRequest } from "fastify";
import { z } from "zod";
import type { Resource } from "../../resources/meta.ts";
import type { TaskSpec, TaskStatus } from "../../resources/task.ts";
import { parseWith } from "../../resources/validate.ts";
import type { WatchEvent } from "../../store/resource-store.ts";
import { namespaceOf, type ApiContext } from "../context.ts";
import { openSse, type SseStream } from "../sse.ts";

type Task = Resource<TaskSpec, TaskStatus>;

/** How many Task changes the server keeps for watches that resume; an older position lists everything again. */
const KEPT_CHANGES = 2000;
/** How many Tasks the summary shows as recent. */
const RECENT_TASKS = 12;

interface NumberedChange {
  /** The change's position in this server's watch, sent as its SSE id and taken back as `resourceVersion` or `Last-Event-ID`. */
  seq: number;
  event: WatchEvent;
}

/**
 * The server's recent Task changes, numbered. Numbering starts at the start time in microseconds, so a
 * position from an earlier run of the server is older than anything this one kept and lists again.
 */
function taskChangeLog(ctx: ApiContext) {
  const kept: NumberedChange[] = [];
  const followers = new Set<(change: NumberedChange) => void>();
  let lastSeq = Date.now() * 1000;
  const stop = ctx.store.watch((event) => {
    if (event.object.kind !== "Task") return;
    const change = { seq: ++lastSeq, event };
    kept.push(change);
    if (kept.length > KEPT_CHANGES) kept.shift();
    for (const follower of followers) follower(change);
  });
  return {
    stop,
    lastSeq: () => lastSeq,
    /** The changes after `seq`, or undefined when they are no longer all kept. */
    since(seq: number): NumberedChange[] | undefined {
      const first = kept[0]?.seq ?? lastSeq + 1;
      if (seq < first - 1 || seq > lastSeq) return undefined;
      return kept.filter((change) => change.seq > seq);
    },
    follow(follower: (change: NumberedChange) => void): () => void {
      followers.add(follower);
      return () => followers.delete(follower);
    },
  };
}

const watchQuery = z.object({
  namespace: z.string().optional(),
  resourceVersion: z.coerce.number().int().min(0, "resourceVersion is the `resourceVersion` of a task summary or the id of a watch event").optional(),
});

/** Where a watch resumes: the `Last-Event-ID` a reconnecting client sends, else `?resourceVersion=`. */
function resumeFrom(request: FastifyRequest): number | undefined {
  const { resourceVersion } = parseWith(watchQuery, request.query ?? {});
  const lastEventId = request.headers["last-event-id"];
  if (lastEventId === undefined) return resourceVersion;
  return parseWith(z.object({ "Last-Event-ID": watchQuery.shape.resourceVersion }), { "Last-Event-ID": lastEventId })["Last-Event-ID"];
}

/**
 * `GET /api/v1/watch/tasks` (SSE): from a position (`resourceVersion`, or `Last-Event-ID` on a reconnection),
 * the namespace's Task changes after it; without one, or from one too old, the Tasks once as `ADDED`
 * events ended by `synced` (after `reset` when a position was given), then every change. Each change
 * carries its position as its id. `GET /api/v1/task-summary` gives the counts by phase, the newest
 * Tasks and the position to watch from, so a page that shows counts never lists every Task.
 */
export function registerTaskWatch(app: FastifyInstance, ctx: ApiContext): void {
  const changes = taskChangeLog(ctx);
  app.addHook("onClose", async () => changes.stop());

  app.get("/task-summary", async (request) => {
    const namespace = namespaceOf(request);
    const resourceVersion = changes.lastSeq();
    const { items } = await ctx.store.list<TaskSpec, TaskStatus>("Task", { namespace });
    return { namespace, resourceVersion, total: items.length, phases: countByPhase(items), recent: newestFirst(items).slice(0, RECENT_TASKS) };
  });

  app.get("/watch/tasks", async (request, reply) => {
    const namespace = namespaceOf(request);
    const after = resumeFrom(request);
    const stream = openSse(request, reply);
    const inNamespace = (change: NumberedChange) => change.event.object.metadata.namespace === namespace;
    const send = (change: NumberedChange) => stream.send(change.event.type, change.event.object, change.seq);
    const kept = after === undefined ? undefined : changes.since(after);
    if (kept) {
      for (const change of kept.filter(inNamespace)) send(change);
      stream.onClose(changes.follow((change) => inNamespace(change) && send(change)));
      return;
    }
    if (after !== undefined) stream.send("reset", { reason: "the changes after that position are no longer kept: here is every Task again" });
    await listThenFollow(stream, namespace, inNamespace, send);
  });

  /** Changes written while the list is read wait for it; the store reports a change as it writes it, so they are newer. */
  async function listThenFollow(stream: SseStream, namespace: string, inNamespace: (change: NumberedChange) => boolean, send: (change: NumberedChange) => void) {
    let backlog: NumberedChange[] | undefined = [];
    const listedAt = changes.lastSeq();
    stream.onClose(
      changes.follow((change) => {
        if (!inNamespace(change)) return;
        if (backlog) backlog.push(change);
        else send(change);
      }),
    );
    let items: Awaited<ReturnType<typeof ctx.store.list>>["items"];
    try {
      ({ items } = await ctx.store.list("Task", { namespace }));
    } catch (err) {
      // The stream has started, so the failure is told in it; the client reconnects.
      stream.send("error", { message: err instanceof Error ? err.message : String(err) });
      return stream.close();
    }
    for (const task of items) stream.send("ADDED", task);
    stream.send("synced", { count: items.length }, listedAt);
    for (const change of backlog) send(change);
    backlog = undefined;
  }
}

function countByPhase(tasks: Task[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const task of tasks) {
    const phase = task.status?.phase ?? "Pending";
    counts[phase] = (counts[phase] ?? 0) + 1;
  }
  return counts;
}

/** Failures first, then the newest: what needs attention comes to the top. */
function newestFirst(tasks: Task[]): Task[] {
  return [...tasks].sort(
    (a, b) => Number(b.status?.phase === "Failed") - Number(a.status?.phase === "Failed") || (b.metadata.creationTimestamp ?? "").localeCompare(a.metadata.creationTimestamp ?? ""),
  );
}
