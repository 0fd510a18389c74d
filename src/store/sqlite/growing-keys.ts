/**
 * Keys that never go back: a Task's events and log chunks are numbered in the order they were stored, and a
 * reader resumes after the last number it saw, so a number once given must never be given again, even after
 * the rows holding the highest ones were deleted with their Task.
 *
 * SQLite's AUTOINCREMENT keeps that promise by writing its `sqlite_sequence` row at every insert: one more
 * page to write at every commit that adds an event. Here a table's next key is one past the larger of its
 * highest key and a floor kept in `counters`, and the floor is raised only when rows are deleted, committed
 * no later than the deletion (in its transaction, or one before it): inserts read it and write nothing
 * more than their row.
 */
const GROWING_KEYS = {
  events: { column: "seq", floor: "events_seq_floor" },
  logs: { column: "id", floor: "logs_id_floor" },
} as const;

type GrowingTable = keyof typeof GROWING_KEYS;

export const growingTables = Object.keys(GROWING_KEYS) as GrowingTable[];

/** The SQL expression of `table`'s next key, for the key's place in an INSERT's VALUES. */
export function nextKey(table: GrowingTable): string {
  const { column, floor } = GROWING_KEYS[table];
  return `(SELECT max(coalesce((SELECT max(${column}) FROM ${table}), 0), coalesce((SELECT value FROM counters WHERE name = '${floor}'), 0)) + 1)`;
}

/** The statement to run before deleting rows of `table`: the floor rises to its highest key, which may be among them. */
export function raiseFloor(table: GrowingTable): string {
  const { column, floor } = GROWING_KEYS[table];
  return `INSERT INTO counters (name, value) VALUES ('${floor}', coalesce((SELECT max(${column}) FROM ${table}), 0))
    ON CONFLICT (name) DO UPDATE SET value = max(value, excluded.value)`;
}
