import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startOrkaServer, type OrkaUnderTest } from "../helpers/orka-server.ts";

interface WatchMessage {
  event: string;
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
        if (event && data) messages.push({ event, data: JSON.parse(data) });
      }
    }
    return messages;
  };
}

describe("GET /api/v1/watch/tasks", () => {
  let orka: OrkaUnderTest;
  const create = (namespace: string, name: string) => orka.api("POST", `/api/v1/tasks?namespace=${namespace}`, { name, type: "ai", prompt: "hello", suspend: true });

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
});
