// Recall quality: a few hundred memories about made-up services, and natural-language questions
// whose answering memory is known. Prints hit@1 and hit@5 of recall_memory as the store runs it,
// beside the earlier behaviour (the whole query as one exact substring, newest first).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabase } from "../src/store/sqlite/db.ts";
import { SqliteMemoryStore } from "../src/store/sqlite/memory-store.ts";

const SERVICES = [
  "zebra-7", "billing-api", "lion-3", "checkout", "search-indexer", "auth-gateway", "ledger", "mailer", "thumbnailer", "geo-router",
  "fraud-scorer", "inventory", "pricing-engine", "notifier", "report-builder", "session-store", "audit-trail", "feature-flags",
  "image-cdn", "chat-relay", "payments-v2", "warehouse-sync", "tax-calculator", "recommendations", "kiosk-backend",
  "partner-portal", "metrics-proxy", "queue-drainer", "export-worker", "identity-hub", "shipping-quotes", "loyalty",
  "catalog", "coupon-service", "status-page", "webhook-fanout", "backup-runner", "dns-updater", "ml-trainer", "cart",
];
const PEOPLE = ["Priya", "Tomasz", "Aiko", "Mateus", "Lena", "Omar", "Grace", "Ivan", "Chen", "Fatima"];
const DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"];
const DATABASES = ["PostgreSQL", "MySQL", "Cassandra", "Redis", "MongoDB"];
const REGIONS = ["eu-west-1", "us-east-2", "ap-south-1", "eu-central-1", "us-west-2"];
const LANGUAGES = [["Go", "Bazel"], ["Rust", "Cargo"], ["TypeScript", "pnpm"], ["Java", "Gradle"], ["Python", "Poetry"]];
const TEAMS = ["payments", "platform", "growth", "core", "data"];

/** One fact about a service, and questions a model might ask to find it (none quotes the fact). */
const FACTS: Array<{ fact: (s: string, i: number) => string; questions: (s: string) => string[] }> = [
  { fact: (s, i) => `The deploy window for service ${s} is ${DAYS[i % 5]} ${10 + (i % 8)}:00 UTC.`, questions: (s) => [`When is the deploy window for ${s}?`, `deploy window ${s}`] },
  { fact: (s, i) => `${PEOPLE[i % 10]} owns the ${s} service and approves its releases.`, questions: (s) => [`Who approves releases of ${s}?`, `${s} owner`] },
  { fact: (s, i) => `${s} stores its data in a ${DATABASES[i % 5]} cluster named ${s}-db.`, questions: (s) => [`Which cluster stores the data of ${s}?`, `${s} data store`] },
  { fact: (s, i) => `The on-call rotation for ${s} is managed in the ${TEAMS[i % 5]} team's PagerDuty schedule.`, questions: (s) => [`Who is on call for ${s}?`, `${s} on-call rotation`] },
  { fact: (s, i) => `${s} runs in region ${REGIONS[i % 5]} with failover to ${REGIONS[(i + 2) % 5]}.`, questions: (s) => [`Which region does ${s} run in?`, `${s} failover region`] },
  { fact: (s) => `The runbook for ${s} incidents lives at wiki/runbooks/${s}.`, questions: (s) => [`Where is the incident runbook of ${s}?`, `runbook ${s}`] },
  { fact: (s, i) => `${s} has an availability SLO of 99.${9 - (i % 3)}% measured over 30 days.`, questions: (s) => [`What availability SLO does ${s} have?`, `${s} SLO`] },
  { fact: (s, i) => `The ${s} repository is written in ${LANGUAGES[i % 5][0]} and built with ${LANGUAGES[i % 5][1]}.`, questions: (s) => [`What language is the ${s} repository written in?`, `${s} build tool`] },
];
/** General notes that share words with the questions but answer none of them. */
const DISTRACTORS = [
  "Deploys are frozen during the last week of December.",
  "Every service must have a runbook before it goes live.",
  "The on-call handbook explains how to page a second engineer.",
  "Availability is reported monthly to the leadership team.",
  "Releases are approved in the weekly change review.",
  "Failover drills happen every quarter in each region.",
  "New repositories start from the service template.",
  "Data retention for logs is thirty days.",
];

const dir = mkdtempSync(join(tmpdir(), "orka-bench-recall-"));
const db = openDatabase(join(dir, "recall.db"));
const store = new SqliteMemoryStore(db);
const questions: Array<{ question: string; answer: string }> = [];
db.transaction(() => {
  SERVICES.forEach((service, i) =>
    FACTS.forEach(({ fact, questions: ask }) => {
      const memory = store.createMemory("bench", { content: fact(service, i), source: "user" });
      for (const question of ask(service)) questions.push({ question, answer: memory.id });
    }),
  );
  for (let round = 0; round < 5; round++) for (const note of DISTRACTORS) store.createMemory("bench", { content: note, source: "user" });
})();

/** The earlier recall: the whole query as one exact substring of the trigram index, newest first. */
const substringRecall = db.prepare<[string, number], { id: string }>(
  `SELECT m.id FROM memories_fts f JOIN memories m ON m.rowid = f.rowid WHERE memories_fts MATCH ? AND m.namespace = 'bench' ORDER BY f.rowid DESC LIMIT ?`,
);
const systems: Record<string, (query: string) => string[]> = {
  "recall_memory (ranked by terms)": (query) => store.recall("bench", { query, limit: 5 }).map((m) => m.id),
  "exact substring, newest first (before)": (query) => substringRecall.all(`"${query.replace(/"/g, '""')}"`, 5).map((row) => row.id),
};
function score(label: string) {
  for (const [system, recall] of Object.entries(systems)) {
    let hit1 = 0;
    let hit5 = 0;
    for (const { question, answer } of questions) {
      const found = recall(question);
      if (found[0] === answer) hit1++;
      if (found.includes(answer)) hit5++;
    }
    const share = (hits: number) => +(hits / questions.length).toFixed(3);
    const memories = (db.prepare("SELECT count(*) FROM memories").pluck().get() as number);
    console.log(JSON.stringify({ bench: "recall quality", store: label, system, memories, questions: questions.length, hit_at_1: share(hit1), hit_at_5: share(hit5) }));
  }
}

score("facts and a few general notes");
// Newer notes full of the questions' common words, more of them than recall reads per word.
const COMMON = ["deploy", "window", "releases", "cluster", "data", "call", "region", "runbook", "incident", "availability", "language", "repository", "owner", "rotation", "failover", "build"];
db.transaction(() => {
  for (let i = 0; i < 3000; i++) store.createMemory("bench", { content: `Note ${i}: ${COMMON[i % COMMON.length]} ${COMMON[(i * 7 + 3) % COMMON.length]} checklist reviewed`, source: "user" });
})();
score("plus 3,000 newer notes of common words");
db.close();
rmSync(dir, { recursive: true, force: true });
