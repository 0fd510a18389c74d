/** Schema migrations, applied in order; never edit one that has shipped, add a new one. */
export const migrations: string[] = [
  `
  CREATE TABLE resources (
    kind TEXT NOT NULL,
    namespace TEXT NOT NULL,
    name TEXT NOT NULL,
    uid TEXT NOT NULL UNIQUE,
    resource_version INTEGER NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (kind, namespace, name)
  ) WITHOUT ROWID;
  CREATE TABLE owner_refs (
    owner_uid TEXT NOT NULL,
    kind TEXT NOT NULL,
    namespace TEXT NOT NULL,
    name TEXT NOT NULL,
    PRIMARY KEY (owner_uid, kind, namespace, name)
  ) WITHOUT ROWID;
  CREATE TABLE counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;
  INSERT INTO counters VALUES ('resource_version', 0);

  CREATE TABLE results (
    namespace TEXT NOT NULL, task TEXT NOT NULL, body TEXT NOT NULL, created_at TEXT NOT NULL,
    PRIMARY KEY (namespace, task)
  ) WITHOUT ROWID;
  CREATE TABLE events (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    namespace TEXT NOT NULL, task TEXT NOT NULL, type TEXT NOT NULL, severity TEXT NOT NULL,
    tool_name TEXT, tool_call_id TEXT, summary TEXT NOT NULL, content TEXT, created_at TEXT NOT NULL
  );
  CREATE INDEX events_by_task ON events (namespace, task, seq);
  CREATE TABLE logs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    namespace TEXT NOT NULL, task TEXT NOT NULL, attempt INTEGER NOT NULL, chunk TEXT NOT NULL
  );
  CREATE INDEX logs_by_task ON logs (namespace, task, id);
  CREATE TABLE artifacts (
    namespace TEXT NOT NULL, task TEXT NOT NULL, file TEXT NOT NULL, content BLOB NOT NULL, created_at TEXT NOT NULL,
    PRIMARY KEY (namespace, task, file)
  ) WITHOUT ROWID;
  CREATE TABLE attempts (
    id TEXT PRIMARY KEY,
    namespace TEXT NOT NULL, task TEXT NOT NULL, task_uid TEXT NOT NULL, number INTEGER NOT NULL,
    token_hash TEXT NOT NULL UNIQUE, allowed_tools TEXT NOT NULL,
    state TEXT NOT NULL, exit_code INTEGER, reason TEXT, started_at TEXT NOT NULL, ended_at TEXT
  );
  CREATE INDEX attempts_by_task ON attempts (namespace, task);
  CREATE TABLE api_tokens (
    token_hash TEXT PRIMARY KEY, name TEXT NOT NULL, namespace TEXT, role TEXT NOT NULL, created_at TEXT NOT NULL
  ) WITHOUT ROWID;
  `,
  `
  CREATE TABLE memories (
    id TEXT PRIMARY KEY,
    namespace TEXT NOT NULL,
    session_name TEXT, agent_name TEXT, task_name TEXT, parent_task TEXT,
    source TEXT NOT NULL, source_proposal_id TEXT,
    content TEXT NOT NULL, tags TEXT NOT NULL DEFAULT '',
    disabled INTEGER NOT NULL DEFAULT 0, deleted INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL, updated_at TEXT NOT NULL, last_recalled_at TEXT, recalled_count INTEGER NOT NULL DEFAULT 0
  );
  CREATE INDEX memories_by_namespace ON memories (namespace, updated_at DESC, id DESC);
  CREATE UNIQUE INDEX memories_one_per_proposal ON memories (namespace, source_proposal_id) WHERE source_proposal_id IS NOT NULL;
  CREATE VIRTUAL TABLE memories_fts USING fts5 (content, tags, content='memories', content_rowid='rowid', tokenize='trigram');
  CREATE TRIGGER memories_ai AFTER INSERT ON memories BEGIN
    INSERT INTO memories_fts (rowid, content, tags) VALUES (new.rowid, new.content, new.tags);
  END;
  CREATE TRIGGER memories_ad AFTER DELETE ON memories BEGIN
    INSERT INTO memories_fts (memories_fts, rowid, content, tags) VALUES ('delete', old.rowid, old.content, old.tags);
  END;
  CREATE TRIGGER memories_au AFTER UPDATE OF content, tags ON memories BEGIN
    INSERT INTO memories_fts (memories_fts, rowid, content, tags) VALUES ('delete', old.rowid, old.content, old.tags);
    INSERT INTO memories_fts (rowid, content, tags) VALUES (new.rowid, new.content, new.tags);
  END;

  CREATE TABLE memory_proposals (
    id TEXT PRIMARY KEY,
    namespace TEXT NOT NULL,
    task_name TEXT, agent_name TEXT, type TEXT NOT NULL, skill_name TEXT,
    title TEXT NOT NULL, description TEXT, content TEXT, patch TEXT,
    status TEXT NOT NULL, reviewer TEXT, review_note TEXT,
    applied_memory_id TEXT, applied_by TEXT,
    created_at TEXT NOT NULL, updated_at TEXT NOT NULL, reviewed_at TEXT, applied_at TEXT
  );
  CREATE INDEX memory_proposals_by_namespace ON memory_proposals (namespace, created_at DESC);

  CREATE TABLE sessions (
    namespace TEXT NOT NULL, name TEXT NOT NULL, lock_task TEXT, created_at TEXT NOT NULL,
    PRIMARY KEY (namespace, name)
  ) WITHOUT ROWID;
  CREATE TABLE transcript_messages (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    namespace TEXT NOT NULL, session_name TEXT NOT NULL, role TEXT NOT NULL, name TEXT,
    content TEXT NOT NULL, task_name TEXT, created_at TEXT NOT NULL
  );
  CREATE INDEX transcript_by_session ON transcript_messages (namespace, session_name, id);
  CREATE VIRTUAL TABLE transcript_fts USING fts5 (content, content='transcript_messages', content_rowid='id', tokenize='trigram');
  CREATE TRIGGER transcript_ai AFTER INSERT ON transcript_messages BEGIN
    INSERT INTO transcript_fts (rowid, content) VALUES (new.id, new.content);
  END;
  CREATE TRIGGER transcript_ad AFTER DELETE ON transcript_messages BEGIN
    INSERT INTO transcript_fts (transcript_fts, rowid, content) VALUES ('delete', old.id, old.content);
  END;
  `,
  `
  CREATE TABLE plans (
    namespace TEXT NOT NULL, task TEXT NOT NULL, iteration INTEGER NOT NULL, summary TEXT NOT NULL,
    progress_pct INTEGER NOT NULL, goal_complete INTEGER NOT NULL, plan_document TEXT NOT NULL,
    created_at TEXT NOT NULL, updated_at TEXT NOT NULL,
    PRIMARY KEY (namespace, task)
  ) WITHOUT ROWID;
  CREATE TABLE messages (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    namespace TEXT NOT NULL, parent_task TEXT NOT NULL, from_task TEXT NOT NULL, to_task TEXT NOT NULL,
    content TEXT NOT NULL, created_at TEXT NOT NULL
  );
  CREATE INDEX messages_by_family ON messages (namespace, parent_task, id);
  CREATE TABLE message_reads (
    message_id INTEGER NOT NULL REFERENCES messages (id) ON DELETE CASCADE, reader TEXT NOT NULL,
    PRIMARY KEY (message_id, reader)
  ) WITHOUT ROWID;
  `,
  `
  CREATE TABLE approvals (
    id TEXT NOT NULL, namespace TEXT NOT NULL, task TEXT NOT NULL, task_uid TEXT NOT NULL, iteration INTEGER NOT NULL,
    action TEXT NOT NULL, target_tool TEXT NOT NULL, args_digest TEXT NOT NULL, spec_digest TEXT NOT NULL,
    args_preview TEXT NOT NULL, risk_summary TEXT, severity TEXT NOT NULL, status TEXT NOT NULL,
    created_at TEXT NOT NULL, decision_time TEXT, decision_reason TEXT, decision_actor TEXT, executed_attempt TEXT,
    PRIMARY KEY (namespace, id)
  ) WITHOUT ROWID;
  CREATE INDEX approvals_by_task ON approvals (namespace, task, created_at);
  `,
  `
  CREATE INDEX memories_by_namespace_rowid ON memories (namespace);
  `,
  `
  CREATE TABLE audit_events (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    at TEXT NOT NULL, namespace TEXT, principal TEXT, method TEXT NOT NULL, path TEXT NOT NULL,
    status INTEGER NOT NULL, reason TEXT NOT NULL
  );
  `,
  // Grant failures let through in audit mode are kept beside the refusals.
  `ALTER TABLE audit_events ADD COLUMN outcome TEXT NOT NULL DEFAULT 'refused';`,
  // The per-attempt journal (content-addressed messages, steps) and the effect ledger of tool calls.
  `
  CREATE TABLE journal_segments (
    namespace TEXT NOT NULL, task TEXT NOT NULL, hash TEXT NOT NULL, body TEXT NOT NULL,
    PRIMARY KEY (namespace, task, hash)
  ) WITHOUT ROWID;
  CREATE TABLE journal_steps (
    namespace TEXT NOT NULL, task TEXT NOT NULL, task_uid TEXT NOT NULL, run INTEGER NOT NULL, seq INTEGER NOT NULL,
    kind TEXT NOT NULL, segments TEXT NOT NULL, detail TEXT NOT NULL, attempt INTEGER NOT NULL, created_at TEXT NOT NULL,
    PRIMARY KEY (task_uid, run, seq)
  ) WITHOUT ROWID;
  CREATE INDEX journal_steps_task ON journal_steps (namespace, task);
  CREATE TABLE effects (
    key TEXT PRIMARY KEY, namespace TEXT NOT NULL, task TEXT NOT NULL, tool TEXT NOT NULL,
    state TEXT NOT NULL, result TEXT, created_at TEXT NOT NULL, updated_at TEXT NOT NULL
  ) WITHOUT ROWID;
  CREATE INDEX effects_task ON effects (namespace, task);
  `,
  // Word indexes beside the trigram ones, so recall and transcript search can rank by every word
  // of a query (stemmed: "deploys" finds "deploy"); the trigram indexes still find substrings.
  `
  CREATE VIRTUAL TABLE memories_words USING fts5 (content, tags, content='memories', content_rowid='rowid', tokenize='porter unicode61 remove_diacritics 2');
  CREATE TRIGGER memories_words_ai AFTER INSERT ON memories BEGIN
    INSERT INTO memories_words (rowid, content, tags) VALUES (new.rowid, new.content, new.tags);
  END;
  CREATE TRIGGER memories_words_ad AFTER DELETE ON memories BEGIN
    INSERT INTO memories_words (memories_words, rowid, content, tags) VALUES ('delete', old.rowid, old.content, old.tags);
  END;
  CREATE TRIGGER memories_words_au AFTER UPDATE OF content, tags ON memories BEGIN
    INSERT INTO memories_words (memories_words, rowid, content, tags) VALUES ('delete', old.rowid, old.content, old.tags);
    INSERT INTO memories_words (rowid, content, tags) VALUES (new.rowid, new.content, new.tags);
  END;
  INSERT INTO memories_words (memories_words) VALUES ('rebuild');
  CREATE VIRTUAL TABLE transcript_words USING fts5 (content, content='transcript_messages', content_rowid='id', tokenize='porter unicode61 remove_diacritics 2');
  CREATE TRIGGER transcript_words_ai AFTER INSERT ON transcript_messages BEGIN
    INSERT INTO transcript_words (rowid, content) VALUES (new.id, new.content);
  END;
  CREATE TRIGGER transcript_words_ad AFTER DELETE ON transcript_messages BEGIN
    INSERT INTO transcript_words (transcript_words, rowid, content) VALUES ('delete', old.id, old.content);
  END;
  INSERT INTO transcript_words (transcript_words) VALUES ('rebuild');
  `,
  // Repeated refusals coalesce into one row with a count, listed (seq) by their latest refusal and pruned by its age.
  `
  ALTER TABLE audit_events ADD COLUMN client TEXT;
  ALTER TABLE audit_events ADD COLUMN count INTEGER NOT NULL DEFAULT 1;
  ALTER TABLE audit_events ADD COLUMN last_at TEXT;
  ALTER TABLE audit_events ADD COLUMN coalesce_key TEXT;
  ALTER TABLE audit_events ADD COLUMN seq INTEGER;
  UPDATE audit_events SET last_at = at, seq = id;
  CREATE UNIQUE INDEX audit_events_coalesce ON audit_events (coalesce_key);
  CREATE INDEX audit_events_last_at ON audit_events (last_at);
  CREATE INDEX audit_events_seq ON audit_events (seq);
  `,
  // The journal step an ai run's event happened at, so a fork can start there.
  `ALTER TABLE events ADD COLUMN journal_run INTEGER; ALTER TABLE events ADD COLUMN journal_step INTEGER;`,
  // Refusals of no signed-in caller are counted apart (their own row quota), each pool numbered in insert order.
  `
  ALTER TABLE audit_events ADD COLUMN anonymous INTEGER NOT NULL DEFAULT 0;
  UPDATE audit_events SET anonymous = 1 WHERE principal IS NULL;
  DROP INDEX audit_events_seq;
  CREATE INDEX audit_events_pool_seq ON audit_events (anonymous, seq);
  `,
  // A coding-agent session's brokered tools as frozen when its attempt started (effect, custom Tool digest),
  // and the digest of what a brokered call was reserved with, so a call id reused with other arguments is refused.
  `ALTER TABLE attempts ADD COLUMN session_tools TEXT; ALTER TABLE effects ADD COLUMN payload_digest TEXT;`,
  // An object's labels as rows, written in the same transaction as the object, so a label selector is
  // answered from an index instead of by reading every object of the kind; the phase of a status,
  // indexed, so the active Tasks of a namespace are counted without reading them; and the keys alone,
  // so what remains after a page is counted without reading the objects' bodies.
  `
  CREATE TABLE resource_labels (
    kind TEXT NOT NULL, namespace TEXT NOT NULL, name TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL,
    PRIMARY KEY (kind, namespace, name, key)
  ) WITHOUT ROWID;
  CREATE INDEX resource_labels_by_value ON resource_labels (kind, key, value, namespace, name);
  INSERT INTO resource_labels (kind, namespace, name, key, value)
    SELECT r.kind, r.namespace, r.name, label.key, label.value FROM resources r, json_each(r.body, '$.metadata.labels') label;
  CREATE INDEX resources_by_phase ON resources (kind, namespace, json_extract(body, '$.status.phase'));
  CREATE INDEX resources_by_name ON resources (kind, namespace, name);
  `,
  // Tables of large rows (objects, results, files, conversation segments, step details, effect results,
  // plans, approval previews) become rowid tables with the same unique key. A WITHOUT ROWID table keeps
  // whole rows in its key's b-tree, so every step down the tree compared against a whole row and read its
  // overflow pages from disk: a lookup by name cost 17-26 µs at a thousand Tasks instead of 7. The key's own
  // index now serves what resources_by_name did. No other table refers to these. A Task's approvals and
  // attempts are indexed in the order they are read in, so the reads need no sort (a sort cost about 10 µs
  // even when nothing was found).
  [
    rowidTable("resources", "kind TEXT NOT NULL, namespace TEXT NOT NULL, name TEXT NOT NULL, uid TEXT NOT NULL UNIQUE, resource_version INTEGER NOT NULL, body TEXT NOT NULL, PRIMARY KEY (kind, namespace, name)", [
      "CREATE INDEX resources_by_phase ON resources (kind, namespace, json_extract(body, '$.status.phase'))",
    ]),
    rowidTable("results", "namespace TEXT NOT NULL, task TEXT NOT NULL, body TEXT NOT NULL, created_at TEXT NOT NULL, PRIMARY KEY (namespace, task)"),
    rowidTable("artifacts", "namespace TEXT NOT NULL, task TEXT NOT NULL, file TEXT NOT NULL, content BLOB NOT NULL, created_at TEXT NOT NULL, PRIMARY KEY (namespace, task, file)"),
    rowidTable(
      "plans",
      "namespace TEXT NOT NULL, task TEXT NOT NULL, iteration INTEGER NOT NULL, summary TEXT NOT NULL, progress_pct INTEGER NOT NULL, goal_complete INTEGER NOT NULL, plan_document TEXT NOT NULL, created_at TEXT NOT NULL, updated_at TEXT NOT NULL, PRIMARY KEY (namespace, task)",
    ),
    rowidTable(
      "approvals",
      "id TEXT NOT NULL, namespace TEXT NOT NULL, task TEXT NOT NULL, task_uid TEXT NOT NULL, iteration INTEGER NOT NULL, action TEXT NOT NULL, target_tool TEXT NOT NULL, args_digest TEXT NOT NULL, spec_digest TEXT NOT NULL, args_preview TEXT NOT NULL, risk_summary TEXT, severity TEXT NOT NULL, status TEXT NOT NULL, created_at TEXT NOT NULL, decision_time TEXT, decision_reason TEXT, decision_actor TEXT, executed_attempt TEXT, PRIMARY KEY (namespace, id)",
      ["CREATE INDEX approvals_by_task ON approvals (namespace, task, created_at, id)"],
    ),
    rowidTable("journal_segments", "namespace TEXT NOT NULL, task TEXT NOT NULL, hash TEXT NOT NULL, body TEXT NOT NULL, PRIMARY KEY (namespace, task, hash)"),
    rowidTable(
      "journal_steps",
      "namespace TEXT NOT NULL, task TEXT NOT NULL, task_uid TEXT NOT NULL, run INTEGER NOT NULL, seq INTEGER NOT NULL, kind TEXT NOT NULL, segments TEXT NOT NULL, detail TEXT NOT NULL, attempt INTEGER NOT NULL, created_at TEXT NOT NULL, PRIMARY KEY (task_uid, run, seq)",
      ["CREATE INDEX journal_steps_task ON journal_steps (namespace, task)"],
    ),
    rowidTable(
      "effects",
      "key TEXT NOT NULL PRIMARY KEY, namespace TEXT NOT NULL, task TEXT NOT NULL, tool TEXT NOT NULL, state TEXT NOT NULL, result TEXT, created_at TEXT NOT NULL, updated_at TEXT NOT NULL, payload_digest TEXT",
      ["CREATE INDEX effects_task ON effects (namespace, task)"],
    ),
    "DROP INDEX attempts_by_task;",
    "CREATE INDEX attempts_by_task ON attempts (namespace, task, started_at, number);",
  ].join("\n"),
  // Events and log chunks are numbered without AUTOINCREMENT (growing-keys.ts says why); each table's floor
  // starts at the highest number AUTOINCREMENT gave, read before the table and its sqlite_sequence row go.
  [
    "INSERT INTO counters (name, value) VALUES ('events_seq_floor', coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'events'), 0));",
    rowidTable(
      "events",
      "seq INTEGER PRIMARY KEY, namespace TEXT NOT NULL, task TEXT NOT NULL, type TEXT NOT NULL, severity TEXT NOT NULL, tool_name TEXT, tool_call_id TEXT, summary TEXT NOT NULL, content TEXT, created_at TEXT NOT NULL, journal_run INTEGER, journal_step INTEGER",
      ["CREATE INDEX events_by_task ON events (namespace, task, seq)"],
    ),
    "INSERT INTO counters (name, value) VALUES ('logs_id_floor', coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'logs'), 0));",
    rowidTable("logs", "id INTEGER PRIMARY KEY, namespace TEXT NOT NULL, task TEXT NOT NULL, attempt INTEGER NOT NULL, chunk TEXT NOT NULL", [
      "CREATE INDEX logs_by_task ON logs (namespace, task, id)",
    ]),
  ].join("\n"),
];

/**
 * Rebuilds `table` as a rowid table: `columns` lists the table's columns in their current order (rows are
 * copied by position) with its key, each key column NOT NULL (a WITHOUT ROWID table's key is, a rowid
 * table's is not unless said); dropping the old table drops its indexes, so `indexes` are made again.
 */
function rowidTable(table: string, columns: string, indexes: string[] = []): string {
  return [
    `CREATE TABLE ${table}_rowid (${columns});`,
    `INSERT INTO ${table}_rowid SELECT * FROM ${table};`,
    `DROP TABLE ${table};`,
    `ALTER TABLE ${table}_rowid RENAME TO ${table};`,
    ...indexes.map((index) => `${index};`),
  ].join("\n");
}
