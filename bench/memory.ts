// Memory store latency: recall_memory at 10k and 100k memories, search_transcript at 1M
// transcript messages (SQLite FTS5 trigram), as the internal routes call them. Prints p50/p95.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabase } from "../src/store/sqlite/db.ts";
import { SqliteMemoryStore } from "../src/store/sqlite/memory-store.ts";
import { percentiles } from "./timing.ts";

const MESSAGES = Number(process.env.BENCH_TRANSCRIPT_MESSAGES ?? 1_000_000);
const WORDS = ["deploy", "staging", "database", "migration", "customer", "invoice", "latency", "kubernetes", "token", "review", "release", "rollback", "cache", "queue", "backup", "alert", "budget", "roadmap", "incident", "schema"];
let seed = 42;
const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
const sentence = (n: number) => Array.from({ length: n }, () => WORDS[Math.floor(random() * WORDS.length)]).join(" ") + ` ${Math.floor(random() * 1e6)}`;

function measure(runs: number, call: (i: number) => unknown) {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    call(i);
    times.push(performance.now() - started);
  }
  return percentiles(times);
}

const dir = mkdtempSync(join(tmpdir(), "orka-bench-memory-"));
const db = openDatabase(join(dir, "bench.db"));
const store = new SqliteMemoryStore(db);
const insertMemories = (count: number) =>
  db.transaction(() => {
    for (let i = 0; i < count; i++) store.createMemory("bench", { content: sentence(20), source: "task", tags: [WORDS[i % WORDS.length]] });
  })();

for (const [total, add] of [[10_000, 10_000], [100_000, 90_000]] as const) {
  insertMemories(add);
  const query = measure(200, (i) => store.recall("bench", { query: `${WORDS[i % WORDS.length]} ${WORDS[(i * 7) % WORDS.length]}`.slice(0, 12), limit: 50 }));
  const rare = measure(200, (i) => store.recall("bench", { query: String(100_000 + ((i * 7919) % 900_000)), limit: 50 }));
  const recent = measure(200, () => store.recall("bench", { limit: 5 }));
  const tagged = measure(200, (i) => store.recall("bench", { tags: [WORDS[i % WORDS.length]], limit: 50 }));
  console.log(JSON.stringify({ bench: `recall_memory at ${total} memories`, common_words_query: query, rare_term_query: rare, newest_5: recent, by_tag: tagged }));
}

const started = performance.now();
const batch = 50_000;
for (let done = 0; done < MESSAGES; done += batch) {
  db.transaction(() => {
    for (let i = 0; i < Math.min(batch, MESSAGES - done); i++) {
      store.appendTranscript("bench", `session-${(done + i) % 1000}`, { role: i % 2 ? "assistant" : "user", content: sentence(30) });
    }
  })();
}
const loadSeconds = ((performance.now() - started) / 1000).toFixed(1);
const search = measure(100, (i) =>
  store.searchTranscripts("bench", { query: `${WORDS[i % WORDS.length]} "${WORDS[(i * 3) % WORDS.length]}"`, limit: 10, maxSnippetLength: 360, excludeSessionName: "session-1" }),
);
const phrase = measure(100, (i) => store.searchTranscripts("bench", { query: `"${WORDS[i % WORDS.length]} ${WORDS[(i * 3) % WORDS.length]}"`, limit: 10, maxSnippetLength: 360 }));
console.log(JSON.stringify({ bench: `search_transcript at ${MESSAGES} messages`, load_s: +loadSeconds, two_terms: search, phrase }));
db.close();
rmSync(dir, { recursive: true, force: true });
