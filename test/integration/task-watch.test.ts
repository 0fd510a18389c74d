import { request as httpRequest } from "node:http";
import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startOrkaServer, type OrkaUnderTest } from "../helpers/orka-server.ts";

interface WatchMessage {
  event: string;
  id?: string;
  data: { metadata?: { name: string; namespace: string }; count?: number };
}

/** Follows a watch's SSE frames; `until` reads on until its test passes, for at most `timeoutMs`. */
function followWatch(response: Response) {
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  return async function until(done: (messages: WatchMessage[]) => boolean, timeoutMs = 15_000): Promise<WatchMessage[]> {
    const messages: WatchMessage[] = [];
    const deadline = Date.now() + timeoutMs;
    while (!done(messages)) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`watch did not deliver in time; got ${JSON.stringify(messages.map((m) => m.event))}`);
      let timer: NodeJS.Timeout | undefined;
      const timedOut = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error("watch read timed out")), left)));
      const chunk = await Promise.race([reader.read(), timedOut]).finally(() => clearTimeout(timer));
      if (chunk.done) break;
      buffer += chunk.value;
      let end: number;
      while ((end = buffer.indexOf("\n\n")) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const event = /^event: (.*)$/m.exec(block)?.[1];
        const data = /^data: (.*)$/m.exec(block)?.[1];
        const id = /^id: (.*)$/m.exec(block)?.[1];
        if (event && data) messages.push({ event, id, data: JSON.parse(data) });
      }
    }
    return messages;
  };
}

/** Opens a stream and drops the connection right away, `afterMs` after sending the request. */
function openAndDrop(url: string, path: string, token: string, afterMs: number): Promise<void> {
  return new Promise((resolve) => {
    const request = httpRequest(`${url}${path}`, { headers: { authorization: `Bearer ${token}` } });
    request.on("error", () => resolve());
    request.end(() => setTimeout(() => (request.destroy(), resolve()), afterMs));
  });
}

describe("GET /api/v1/watch/tasks", () => {
  let orka: OrkaUnderTest;
  const create = (namespace: string, name: string) => orka.api("POST", `/api/v1/tasks?namespace=${namespace}`, { name, type: "ai", prompt: "hello", suspend: true });

  const openStreams = async () => (await orka.api<{ open: number }>("GET", "/api/v1/streams")).body.open;
  /** Polls the server's open stream count until it reads `count` twice in a row (requests still in flight settle), for at most 10 s. */
  const streamsSettleAt = async (count: number) => {
    for (let polls = 0, matched = 0; polls < 100 && matched < 2; polls++) {
      matched = (await openStreams()) === count ? matched + 1 : 0;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    return openStreams();
  };

  beforeAll(async () => {
    orka = await startOrkaServer();
  });
  afterAll(async () => {
    await orka?.stop();
  });

  it("lists the namespace's Tasks once, then follows their changes, and nothing of another namespace", async () => {
    expect((await create("team-a", "first")).status).toBe(201);
    expect((await create("team-b", "elsewhere")).status).toBe(201);
    const abort = new AbortController();
    const response = await fetch(`${orka.url}/api/v1/watch/tasks?namespace=team-a`, { headers: { authorization: `Bearer ${orka.token}` }, signal: abort.signal });
    expect(response.headers.get("content-type")).toBe("text/event-stream");

    const until = followWatch(response);
    const listed = await until((messages) => messages.some((m) => m.event === "synced"));
    expect(listed.map((m) => [m.event, m.data.metadata?.name ?? m.data.count])).toEqual([["ADDED", "first"], ["synced", 1]]);

    expect((await create("team-b", "elsewhere-too")).status).toBe(201);
    expect((await create("team-a", "second")).status).toBe(201);
    expect((await orka.api("DELETE", "/api/v1/tasks/second?namespace=team-a")).status).toBe(204);
    const followed = await until((messages) => messages.some((m) => m.event === "DELETED"));
    abort.abort();
    expect(followed.every((m) => m.data.metadata?.namespace === "team-a")).toBe(true);
    expect(followed[0]).toMatchObject({ event: "ADDED", data: { metadata: { name: "second" } } });
    expect(followed.at(-1)).toMatchObject({ event: "DELETED", data: { metadata: { name: "second" } } });
  });

  it("refuses a team-a token another namespace's watch, and follows its own", async () => {
    const created = await orka.api<{ token: string }>("POST", "/api/v1/auth/tokens", { name: "watcher-a", namespace: "team-a", role: "user" });
    expect(created.status).toBe(201);
    const teamA = created.body.token;
    const refused = await fetch(`${orka.url}/api/v1/watch/tasks?namespace=team-b`, { headers: { authorization: `Bearer ${teamA}` } });
    expect(refused.status).toBe(403);
    expect(refused.headers.get("content-type")).toMatch(/application\/json/);

    const abort = new AbortController();
    const response = await fetch(`${orka.url}/api/v1/watch/tasks?namespace=team-a`, { headers: { authorization: `Bearer ${teamA}` }, signal: abort.signal });
    const until = followWatch(response);
    await until((messages) => messages.some((m) => m.event === "synced"));
    expect((await create("team-b", "not-for-a")).status).toBe(201);
    expect((await create("team-a", "for-a")).status).toBe(201);
    const followed = await until((messages) => messages.some((m) => m.data.metadata?.name === "for-a"));
    abort.abort();
    expect(followed.map((m) => m.data.metadata?.namespace)).not.toContain("team-b");
  });

  it("unsubscribes a watch when its client disconnects", async () => {
    expect(await streamsSettleAt(0)).toBe(0);
    const abort = new AbortController();
    const response = await fetch(`${orka.url}/api/v1/watch/tasks?namespace=team-a`, { headers: { authorization: `Bearer ${orka.token}` }, signal: abort.signal });
    await followWatch(response)((messages) => messages.some((m) => m.event === "synced"));
    expect(await openStreams()).toBe(1);
    abort.abort();
    expect(await streamsSettleAt(0)).toBe(0);
  });

  it("leaves nothing open for clients that disconnect while the request is still being authorized", async () => {
    expect((await create("team-a", "streamed")).status).toBe(201);
    const paths = ["/api/v1/watch/tasks?namespace=team-a", "/api/v1/tasks/streamed/stream?namespace=team-a"];
    for (let round = 0; round < 10; round++) {
      await Promise.all(paths.map((path) => openAndDrop(orka.url, path, orka.token, round % 3)));
    }
    expect(await streamsSettleAt(0)).toBe(0);
  });

  it("cuts off a client that never reads instead of buffering every change for it", async () => {
    const { hostname, port } = new URL(orka.url);
    const socket = connect(Number(port), hostname);
    socket.pause();
    socket.on("error", () => {});
    socket.write(`GET /api/v1/watch/tasks?namespace=slow HTTP/1.1\r\nHost: ${hostname}\r\nAuthorization: Bearer ${orka.token}\r\n\r\n`);
    try {
      expect(await streamsSettleAt(1)).toBe(1);
      const prompt = "x".repeat(512 * 1024);
      // Each Task is written to the watch at least once; 64 of them are far more than any socket buffer holds.
      for (let created = 0; created < 64 && (await openStreams()) > 0; created++) {
        expect((await orka.api("POST", "/api/v1/tasks?namespace=slow", { name: `big-${created}`, type: "ai", prompt, suspend: true })).status).toBe(201);
      }
      expect(await streamsSettleAt(0)).toBe(0);
    } finally {
      socket.destroy();
    }
  }, 60_000);

  it("resumes from the last event id with only the changes since, and lists again from a position it no longer keeps", async () => {
    const abort = new AbortController();
    const watch = (headers: Record<string, string>, query = "") =>
      fetch(`${orka.url}/api/v1/watch/tasks?namespace=resume${query}`, { headers: { authorization: `Bearer ${orka.token}`, ...headers }, signal: abort.signal });
    expect((await create("resume", "before")).status).toBe(201);
    const settled = await orka.waitFor("before", undefined, 15_000, "resume");
    const summary = await orka.api("GET", "/api/v1/task-summary?namespace=resume");
    expect(summary.body).toMatchObject({ total: 1, phases: { [settled.status.phase]: 1 }, recent: [{ metadata: { name: "before" } }] });

    expect((await create("resume", "while-away")).status).toBe(201);
    const resumed = await watch({ "last-event-id": String(summary.body.resourceVersion) });
    const changes = await followWatch(resumed)((messages) => messages.some((m) => m.data.metadata?.name === "while-away"));
    expect(changes.map((m) => m.data.metadata?.name)).not.toContain("before");
    expect(changes[0]).toMatchObject({ event: "ADDED", data: { metadata: { name: "while-away" } } });
    expect(Number(changes[0].id)).toBeGreaterThan(summary.body.resourceVersion);

    const tooOld = await watch({}, "&resourceVersion=1");
    const relisted = await followWatch(tooOld)((messages) => messages.some((m) => m.event === "synced"));
    abort.abort();
    expect(relisted.map((m) => m.event)).toEqual(["reset", "ADDED", "ADDED", "synced"]);

    const refused = await fetch(`${orka.url}/api/v1/watch/tasks?namespace=resume`, { headers: { authorization: `Bearer ${orka.token}`, "last-event-id": "yesterday" } });
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { error: { message: string } }).error.message).toContain("Last-Event-ID");
  });
});
