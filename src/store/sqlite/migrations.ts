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
];
