import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SqliteMemoryStore } from "../../src/store/sqlite/memory-store.ts";
import { tagsLine } from "../../src/store/sqlite/memory-tags.ts";
import { snippet } from "../../src/store/sqlite/transcript-search.ts";
import { MAX_QUERY_WORDS, parseQuery } from "../../src/store/sqlite/term-search.ts";
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

  it("cuts snippets around the first match and reads Tags: lines", () => {
    expect(snippet("a ".repeat(50) + "target word here", ["target"], 20)).toBe("…a a a target word he…");
    expect(snippet("no match in this rather long text", ["zzz"], 10)).toBe("no match i…");
    expect(tagsLine("intro\nTAGS: Ops, deploy ,ops\nTags: ignored")).toEqual(["ops", "deploy"]);
  });
  it("ranks recall by every word of the query: rare words first, then recency; phrases exact; stems; substrings as a fallback", () => {
    const fact = memory.createMemory("ns", { content: "The deploy window for service zebra-7 is Tuesday 14:00 UTC", source: "user", tags: ["ops"] });
    const other = memory.createMemory("ns", { content: "Service lion-3 deploys on Fridays; its window is short", source: "user" });
    for (let i = 0; i < 30; i++) memory.createMemory("ns", { content: `Deploy note ${i}: check the dashboard before any deploy`, source: "user" });
    const newest = memory.createMemory("ns", { content: "The window cleaner comes for the office on Monday", source: "user" });
    const ids = (query: string, extra: object = {}) => memory.recall("ns", { query, limit: 5, ...extra }).map((m) => m.id);

    // Not one exact phrase of the memory, yet it is found first; a natural question works too.
    expect(ids("deploy window zebra-7")[0]).toBe(fact.id);
    expect(ids("When is the deploy window for zebra-7?")[0]).toBe(fact.id);
    // Stemming: "deployments" finds "deploy"/"deploys"; the rarer "lion-3" decides.
    expect(ids("deployments of lion-3")[0]).toBe(other.id);
    // A common word alone: newest first among equals.
    expect(ids("window")).toEqual([newest.id, other.id, fact.id]);
    // A quoted phrase must match exactly.
    expect(ids('"window for service" tuesday')).toEqual([fact.id]);
    expect(ids('"window service"')).toEqual([]);
    // Filters are unchanged by ranking.
    expect(ids("deploy window", { tags: ["ops"] })).toEqual([fact.id]);
    expect(ids("deploy window zebra-7", { taskName: "nope" })).toEqual([]);
    // Part of a word or identifier still matches, through the trigram index.
    expect(ids("ebra-")).toEqual([fact.id]);
    expect(ids("zz")).toEqual([]);
  });

  it("ranks transcript search by terms, keeping the session and role filters", () => {
    memory.ensureSession("ns", "s1");
    memory.ensureSession("ns", "s2");
    const answer = memory.appendTranscript("ns", "s1", { role: "assistant", content: "We agreed the billing migration runs on the 3rd, after the freeze." });
    for (let i = 0; i < 10; i++) memory.appendTranscript("ns", "s2", { role: "user", content: `What about the migration plan, take ${i}?` });
    const ids = (query: string, extra: object = {}) =>
      memory.searchTranscripts("ns", { query, limit: 3, maxSnippetLength: 80, ...extra }).map((r) => r.messageId);
    expect(ids("when does the billing migration run")[0]).toBe(answer.id);
    expect(ids("migration", { roles: ["assistant"] })).toEqual([answer.id]);
    expect(ids("billing migration", { excludeSessionName: "s1" })).not.toContain(answer.id);
    expect(ids('"migration runs"')).toEqual([answer.id]);
  });

  it("parses queries into ranking words and required phrases, dropping stopwords unless nothing else is left", () => {
    expect(parseQuery('When is the "deploy window" for Zebra-7?')).toEqual({ words: ["zebra-7"], phrases: ["deploy window"] });
    expect(parseQuery("the and of")).toEqual({ words: ["the", "and", "of"], phrases: [] });
    expect(parseQuery('-- "" ?')).toEqual({ words: [], phrases: [] });
    expect(parseQuery('blue "sperm whale" big')).toEqual({ words: ["blue", "big"], phrases: ["sperm whale"] });
    expect(parseQuery(Array.from({ length: 100 }, (_, i) => `w${i}`).join(" ")).words).toHaveLength(MAX_QUERY_WORDS);
  });

  it("finds the row with every word even when each word alone is too common to be seen whole, and takes any query text", () => {
    const fact = memory.createMemory("ns", { content: "deploy window for zebra is Tuesday", source: "user" });
    store.db.transaction(() => {
      for (let i = 0; i < 1500; i++) memory.createMemory("ns", { content: `deploy note ${i}`, source: "user" });
      for (let i = 0; i < 1500; i++) memory.createMemory("ns", { content: `window note ${i}`, source: "user" });
    })();
    expect(memory.recall("ns", { query: "deploy window", limit: 5 })[0].id).toBe(fact.id);
    for (const odd of ["a\u0000b", 'say "', "NEAR(a b)", "col:deploy", "deploy*", "^window", "OR AND NOT", "x".repeat(5000)]) {
      expect(() => memory.recall("ns", { query: odd, limit: 5 }), odd).not.toThrow();
      expect(() => memory.searchTranscripts("ns", { query: odd, limit: 5, maxSnippetLength: 50 }), odd).not.toThrow();
    }
  });
});
