import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { tempStore } from "../helpers/store.ts";

const attempt = { id: "a-1", namespace: "default", task: "t", taskUid: "u", number: 1, allowedTools: ["recall_memory"] };

describe("looking an attempt up by its token", () => {
  let store: ReturnType<typeof tempStore>;
  beforeEach(() => {
    store = tempStore();
    store.data.createAttempt(attempt, "token-hash");
  });
  afterEach(() => store.close());

  it("sees the attempt end, even after it was looked up while running", () => {
    expect(store.data.attemptByTokenHash("token-hash")!.state).toBe("running");
    store.data.finishAttempt("a-1", { state: "failed", exitCode: 1, reason: "boom" });
    expect(store.data.attemptByTokenHash("token-hash")).toMatchObject({ state: "failed", exitCode: 1, reason: "boom" });
  });

  it("finds nothing once its Task's data is deleted", () => {
    expect(store.data.attemptByTokenHash("token-hash")).toBeDefined();
    store.data.deleteTaskData("default", "t");
    expect(store.data.attemptByTokenHash("token-hash")).toBeUndefined();
  });

  it("hands out an attempt no caller can change for the next one", () => {
    const found = store.data.attemptByTokenHash("token-hash")!;
    expect(() => found.allowedTools.push("shell")).toThrow(TypeError);
    expect(() => Object.assign(found, { task: "other" })).toThrow(TypeError);
    expect(store.data.attemptByTokenHash("token-hash")).toMatchObject({ task: "t", allowedTools: ["recall_memory"] });
  });
});

describe("a Task's event listeners", () => {
  let store: ReturnType<typeof tempStore>;
  beforeEach(() => (store = tempStore()));
  afterEach(() => store.close());

  it("hear each event with the seq of the one before it, also across a time nobody listened", () => {
    const heard: Array<[number, number]> = [];
    const append = (summary: string) => store.data.appendEvent("default", "t", { type: "Note", summary });
    append("before anyone listened");
    let stop = store.data.onEvent("default", "t", (event, previousSeq) => heard.push([event.seq, previousSeq]));
    store.data.appendEvents("default", "t", [{ type: "Note", summary: "one" }, { type: "Note", summary: "two" }]);
    stop();
    append("while nobody listened");
    append("still nobody");
    stop = store.data.onEvent("default", "t", (event, previousSeq) => heard.push([event.seq, previousSeq]));
    append("heard again");
    stop();
    const seqs = store.data.listEvents("default", "t").map((event) => event.seq);
    expect(heard).toEqual([
      [seqs[1], seqs[0]],
      [seqs[2], seqs[1]],
      [seqs[5], seqs[4]],
    ]);
  });

  it("hear a re-created Task's first event after nothing, not after the deleted Task's last", () => {
    const heard: number[] = [];
    store.data.onEvent("default", "t", (_event, previousSeq) => heard.push(previousSeq));
    store.data.appendEvent("default", "t", { type: "Note", summary: "first life" });
    store.data.deleteTaskData("default", "t");
    store.data.appendEvent("default", "t", { type: "Note", summary: "second life" });
    expect(heard).toEqual([0, 0]);
  });
});
