import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SqliteMemoryStore, snippet, splitQueryTerms, tagsLine } from "../../src/store/sqlite/memory-store.ts";
import { tempStore } from "../helpers/store.ts";

describe("SqliteMemoryStore", () => {
  let store: ReturnType<typeof tempStore>;
  let memory: SqliteMemoryStore;
  beforeEach(() => {
    store = tempStore();
    memory = new SqliteMemoryStore(store.db);
  });
  afterEach(() => store.close());

  it("recalls newest updated first, with and without a query, and finds updated content", async () => {
    const older = memory.createMemory("ns", { content: "alpha fact", source: "user" });
    await new Promise((r) => setTimeout(r, 5));
    const newer = memory.createMemory("ns", { content: "alpha news", source: "user" });
    expect(memory.recall("ns", { limit: 10 }).map((m) => m.id)).toEqual([newer.id, older.id]);
    await new Promise((r) => setTimeout(r, 5));
    memory.updateMemory("ns", older.id, { content: "alpha fact, revised" });
    expect(memory.recall("ns", { limit: 10 }).map((m) => m.id)).toEqual([older.id, newer.id]);
    expect(memory.recall("ns", { query: "ALPHA", limit: 10 }).map((m) => m.id)).toEqual([older.id, newer.id]);
    expect(memory.recall("ns", { query: "revised", limit: 10 }).map((m) => m.content)).toEqual(["alpha fact, revised"]);
    expect(memory.recall("other", { query: "alpha", limit: 10 })).toEqual([]);
    memory.setMemoryDisabled("ns", newer.id, true);
    expect(memory.recall("ns", { query: "alpha", limit: 10 }).map((m) => m.id)).toEqual([older.id]);
    expect(memory.recall("ns", { query: "alpha", limit: 10, includeDisabled: true })[0].id).toBe(newer.id);
  });

  it("splits queries into terms and phrases, cuts snippets around the first match, reads Tags: lines", () => {
    expect(splitQueryTerms('blue "sperm whale" big')).toEqual(["blue", "sperm whale", "big"]);
    expect(snippet("a ".repeat(50) + "target word here", ["target"], 20)).toBe("…a a a target word he…");
    expect(snippet("no match in this rather long text", ["zzz"], 10)).toBe("no match i…");
    expect(tagsLine("intro\nTAGS: Ops, deploy ,ops\nTags: ignored")).toEqual(["ops", "deploy"]);
  });
});
