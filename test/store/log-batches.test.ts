import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { tempStore } from "../helpers/store.ts";

describe("a batch of log chunks", () => {
  let store: ReturnType<typeof tempStore>;
  beforeEach(() => {
    store = tempStore();
  });
  afterEach(() => store.close());

  it("stores what each attempt wrote in it as one chunk, in order, however the attempts' chunks interleave", () => {
    const { data, db } = store;
    const heard: string[] = [];
    data.onLog("default", "t", (chunk) => heard.push(chunk));
    const chunk = (task: string, attempt: number, text: string) => ({ namespace: "default", task, attempt, chunk: text });
    data.appendLogs([chunk("t", 1, "one "), chunk("other", 1, "x"), chunk("t", 1, "two "), chunk("t", 2, "again "), chunk("other", 1, "y"), chunk("t", 2, "done")]);

    expect(heard).toEqual(["one two ", "again done"]);
    expect(data.readLogs("default", "t").text).toBe("one two again done");
    expect(data.readLogs("default", "other").text).toBe("xy");
    expect(db.prepare("SELECT count(*) AS rows FROM logs").get()).toEqual({ rows: 3 });
    // A reader that resumes after what it saw reads the next batch only.
    const { lastId } = data.readLogs("default", "t");
    data.appendLogs([chunk("t", 2, " more")]);
    expect(data.readLogs("default", "t", lastId).text).toBe(" more");
  });
});
