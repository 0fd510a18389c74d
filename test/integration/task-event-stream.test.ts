import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningOrka } from "../../src/server.ts";
import { EMBEDDED_ADMIN_TOKEN, startEmbeddedOrka } from "../helpers/embedded.ts";

const STREAM_DEADLINE_MS = 10_000;

/** Reads a Task's event stream until `count` execution events arrived (or the deadline), then leaves; their ids in order. */
async function readStream(url: string, count: number, whileOpen: () => Promise<void>): Promise<number[]> {
  const abort = new AbortController();
  const deadline = setTimeout(() => abort.abort(), STREAM_DEADLINE_MS);
  const response = await fetch(url, { headers: { authorization: `Bearer ${EMBEDDED_ADMIN_TOKEN}` }, signal: abort.signal });
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  const ids: number[] = [];
  let text = "";
  let acted = false;
  try {
    while (ids.length < count) {
      const { done, value } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
      const frames = text.split("\n\n");
      text = frames.pop()!;
      for (const frame of frames) {
        const id = /^id: (\d+)\nevent: execution_event$/m.exec(frame);
        if (id) ids.push(Number(id[1]));
      }
      // The stream is open once its first frames came: only then are the live events appended.
      if (!acted) {
        acted = true;
        await whileOpen();
      }
    }
  } catch (err) {
    if (!abort.signal.aborted) throw err;
  } finally {
    clearTimeout(deadline);
    abort.abort();
  }
  return ids;
}

describe("a Task's event stream", () => {
  let orka: RunningOrka;
  const event = (summary: string) => ({ type: "Note", summary });

  beforeAll(async () => {
    orka = await startEmbeddedOrka();
    // Scheduled Tasks stay open, so their streams never complete by themselves.
    for (const name of ["streamed", "other"]) {
      const created = await fetch(`${orka.url}/api/v1/tasks`, {
        method: "POST",
        headers: { authorization: `Bearer ${EMBEDDED_ADMIN_TOKEN}`, "content-type": "application/json" },
        body: JSON.stringify({ name, type: "container", image: "busybox", command: ["true"], schedule: "0 0 1 1 *" }),
      });
      expect(created.status).toBe(201);
    }
  }, 30_000);
  afterAll(() => orka?.close());

  it("sends every event once, in order, live ones as they are appended and after a gap from the table", async () => {
    const before = orka.data.listEvents("default", "streamed").length;
    orka.data.appendEvent("default", "streamed", event("first"));
    // Resumed after another Task's later event: the first live event does not follow on from the
    // stream's position, so the table is read; the ones after it follow on.
    const elsewhere = orka.data.appendEvent("default", "other", event("elsewhere"));
    const live = async () => {
      orka.data.appendEvent("default", "streamed", event("live 1"));
      orka.data.appendEvent("default", "other", event("interleaved"));
      orka.data.appendEvents("default", "streamed", [event("batch 1"), event("batch 2"), event("batch 3")]);
      orka.data.appendEvent("default", "streamed", event("live 2"));
    };
    const expected = 5;
    const ids = await readStream(`${orka.url}/api/v1/tasks/streamed/stream?after=${elsewhere.seq}`, expected, live);
    const stored = orka.data.listEvents("default", "streamed", { after: elsewhere.seq }).map((e) => e.seq);
    expect(stored).toHaveLength(expected);
    expect(ids).toEqual(stored);
    expect(orka.data.listEvents("default", "streamed")).toHaveLength(before + 1 + expected);
  });

  it("sends a stream opened from the start every event of the Task and none of another's", async () => {
    const own = orka.data.listEvents("default", "streamed").map((e) => e.seq);
    const ids = await readStream(`${orka.url}/api/v1/tasks/streamed/stream`, own.length + 2, async () => {
      orka.data.appendEvents("default", "other", [event("not mine")]);
      orka.data.appendEvents("default", "streamed", [event("mine 1"), event("mine 2")]);
    });
    expect(ids).toEqual(orka.data.listEvents("default", "streamed").map((e) => e.seq));
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("answers 404 for a Task that does not exist, and ends a stream when its Task is deleted", async () => {
    const headers = { authorization: `Bearer ${EMBEDDED_ADMIN_TOKEN}` };
    expect((await fetch(`${orka.url}/api/v1/tasks/nobody/stream`, { headers })).status).toBe(404);
    const response = await fetch(`${orka.url}/api/v1/tasks/other/stream`, { headers, signal: AbortSignal.timeout(STREAM_DEADLINE_MS) });
    expect(response.status).toBe(200);
    const deleted = await fetch(`${orka.url}/api/v1/tasks/other`, { method: "DELETE", headers });
    expect(deleted.ok).toBe(true);
    const end = /event: stream_complete\ndata: (.*)\n/.exec(await response.text());
    expect(JSON.parse(end![1]).type).toBe("Deleted");
  });
});
