import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { REDACTED, redactValues, TaskSecrets } from "../../src/policy/redact.ts";
import { RedactingTaskDataStore } from "../../src/store/sqlite/redacting-data-store.ts";
import { tempStore } from "../helpers/store.ts";

describe("redacting known Secret values", () => {
  it("finds a value as sent, JSON-escaped, URL-encoded and base64 (Basic auth)", () => {
    const value = 'svc:p@ss "w0rd"/+';
    const echoed = [
      `raw ${value}`,
      `json ${JSON.stringify({ key: value })}`,
      `query ?key=${encodeURIComponent(value)}`,
      `header Authorization: Basic ${Buffer.from(value).toString("base64")}`,
      `url-safe ${Buffer.from(value).toString("base64url")}`,
    ].join("\n");
    const out = redactValues(echoed, [value]);
    expect(out).toBe(
      [`raw ${REDACTED}`, `json {"key":"${REDACTED}"}`, `query ?key=${REDACTED}`, `header Authorization: Basic ${REDACTED}`, `url-safe ${REDACTED}`].join("\n"),
    );
  });

  it("leaves text that only looks secret, and values too short to be told from words", () => {
    expect(redactValues("Authorization: Bearer sk-not-a-known-value-0000 and the cat", ["cat"])).toBe("Authorization: Bearer sk-not-a-known-value-0000 and the cat");
  });

  it("scrubs a Task's values until its data is deleted, and an attempt's failure reason by attempt id", () => {
    const secrets = new TaskSecrets();
    secrets.remember("team", "t1", "t1-1-abcd", ["model-key-123", undefined]);
    expect(secrets.redact("team", "t1", "got model-key-123", ["tool-key-456"])).toBe(`got ${REDACTED}`);
    expect(secrets.redact("team", "t1", "tool-key-456", ["tool-key-456"])).toBe(REDACTED);
    expect(secrets.redactForAttempt("t1-1-abcd", "401: model-key-123")).toBe(`401: ${REDACTED}`);
    expect(secrets.redact("team", "t2", "model-key-123")).toBe("model-key-123");
    secrets.forget("team", "t1");
    expect(secrets.redact("team", "t1", "model-key-123")).toBe("model-key-123");
    expect(secrets.redactForAttempt("t1-1-abcd", "model-key-123")).toBe("model-key-123");
  });

  it("replaces the longer of two values first when one is the other's prefix, in whatever order they are given", () => {
    const short = "pfx-Kq2Vn7";
    const long = `${short}Yc5Hb3Ms`;
    expect(redactValues(`a ${long} b ${short}`, [short, long])).toBe(`a ${REDACTED} b ${REDACTED}`);
    const secrets = new TaskSecrets();
    secrets.remember("team", "t1", "t1-1", [short, long]);
    expect(secrets.redact("team", "t1", `a ${long}`)).toBe(`a ${REDACTED}`);
  });

  it("scrubs a worker's request body: string values of parsed JSON (keys are names, kept as sent), and raw text, but keeps binary bytes", () => {
    const secrets = new TaskSecrets();
    secrets.remember("team", "t1", "t1-1", ["mdl-Zq81xR4tW0pLs9"]);
    const body = { messages: [{ role: "assistant", content: "key mdl-Zq81xR4tW0pLs9" }], detail: { tool_choice: "none", n: 2 } };
    expect(secrets.redactBody("team", "t1", body)).toEqual({ messages: [{ role: "assistant", content: `key ${REDACTED}` }], detail: { tool_choice: "none", n: 2 } });
    expect(String(secrets.redactBody("team", "t1", Buffer.from("said mdl-Zq81xR4tW0pLs9")))).toBe(`said ${REDACTED}`);
    const binary = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from("mdl-Zq81xR4tW0pLs9")]);
    expect(secrets.redactBody("team", "t1", binary)).toBe(binary);
    expect(secrets.redactBody("team", "other", body)).toEqual(body);
  });

  it("walks a body nested deeper than the stack would allow, keeping its keys in order", () => {
    const secrets = new TaskSecrets();
    secrets.remember("team", "t1", "t1-1", ["mdl-Zq81xR4tW0pLs9"]);
    let deep: unknown = "mdl-Zq81xR4tW0pLs9";
    for (let level = 0; level < 20_000; level++) deep = level % 2 ? [deep] : { z: 1, a: deep };
    let out = secrets.redactBody("team", "t1", deep);
    for (let level = 20_000 - 1; level >= 0; level--) {
      if (level % 2) out = (out as unknown[])[0];
      else {
        expect(Object.keys(out as object)).toEqual(["z", "a"]);
        out = (out as { a: unknown }).a;
      }
    }
    expect(out).toBe(REDACTED);
  });
});

describe("a running attempt's log stream", () => {
  let store: ReturnType<typeof tempStore>;
  let secrets: TaskSecrets;
  let data: RedactingTaskDataStore;
  beforeEach(() => {
    store = tempStore();
    secrets = new TaskSecrets();
    data = new RedactingTaskDataStore(store.db, secrets);
  });
  afterEach(() => store.close());

  /** Attempt `id` of Task `task` in namespace team, number 1, whose Secret holds `value`. */
  const startAttempt = (task: string, id: string, value = "mdl-Zq81xR4tW0pLs9") => {
    secrets.remember("team", task, id, [value]);
    data.createAttempt({ id, namespace: "team", task, taskUid: `uid-${task}`, number: 1, allowedTools: [] }, `hash-${id}`);
  };

  it("finds a value split across two chunks, and writes what it held back when the attempt ends", () => {
    startAttempt("t1", "t1-1");
    data.appendLog("team", "t1", 1, "calling with mdl-Zq81");
    data.appendLog("team", "t1", 1, "xR4tW0pLs9 then done");
    data.finishAttempt("t1-1", { state: "succeeded", exitCode: 0 });
    expect(data.readLogs("team", "t1").text).toBe(`calling with ${REDACTED} then done`);
  });

  it("writes what one attempt held back when it ends, and keeps holding the other running attempts' tails", () => {
    for (const task of ["t1", "t2", "t3"]) {
      startAttempt(task, `${task}-1`);
      data.appendLog("team", task, 1, `${task} calling with mdl-Zq81`);
    }
    data.finishAttempt("t2-1", { state: "succeeded", exitCode: 0 });
    const stored = (task: string) => data.readLogs("team", task).text;
    // What could start a value stays held back: one character less than its longest form.
    const held = (text: string) => text.slice(0, text.length - (secrets.longestForm("team", "t1") - 1));
    expect(held("t1 calling with mdl-Zq81").length).toBeGreaterThan(0);
    expect(["t1", "t2", "t3"].map(stored)).toEqual([held("t1 calling with mdl-Zq81"), "t2 calling with mdl-Zq81", held("t3 calling with mdl-Zq81")]);
    data.appendLog("team", "t3", 1, "xR4tW0pLs9 done");
    data.finishAttempt("t3-1", { state: "succeeded", exitCode: 0 });
    expect(stored("t3")).toBe(`t3 calling with ${REDACTED} done`);
    expect(stored("t1")).toBe(held("t1 calling with mdl-Zq81"));
    data.finishAttempt("t1-1", { state: "failed", exitCode: 1 });
    expect(stored("t1")).toBe("t1 calling with mdl-Zq81");
  });

  it("keeps the stream of a later attempt with the same number open when the earlier one ends", () => {
    startAttempt("t1", "t1-a");
    startAttempt("t1", "t1-b");
    data.appendLog("team", "t1", 1, "calling with mdl-Zq81");
    data.finishAttempt("t1-a", { state: "failed", exitCode: 1 });
    data.appendLog("team", "t1", 1, "xR4tW0pLs9 then done");
    data.finishAttempt("t1-b", { state: "succeeded", exitCode: 0 });
    expect(data.readLogs("team", "t1").text).toBe(`calling with ${REDACTED} then done`);
  });

  it("keeps a character made of two code units whole where a chunk is held back", () => {
    startAttempt("t1", "t1-1", "abcdefgh");
    // The longest form of "abcdefgh" is 12 characters, so 11 are held back: the cut falls inside the emoji.
    data.appendLog("team", "t1", 1, "x😀1234567890");
    data.appendLog("team", "t1", 1, " and abcdefgh");
    data.finishAttempt("t1-1", { state: "succeeded", exitCode: 0 });
    expect(data.readLogs("team", "t1").text).toBe(`x😀1234567890 and ${REDACTED}`);
  });
});

