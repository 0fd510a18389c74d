import type { RecallFilter } from "../memory-store.ts";
import { prepared, type Db } from "./db.ts";
import { normalizeTags } from "./memory-tags.ts";
import { ftsString, likeEscape, parseQuery, rankedSearch, TRIGRAM } from "./term-search.ts";

type Row = Record<string, unknown>;

/**
 * The memory rows a recall returns: without a query the newest first; with one the best ranked,
 * or, when no word of it ranks, the rows holding it as a substring, newest first.
 */
export function recallMemoryRows(db: Db, namespace: string, filter: RecallFilter): Row[] {
  const { where, params } = recallFilters(namespace, filter);
  const query = filter.query?.trim();
  if (!query) {
    // Rowid order is updatedAt order (see moveToNewest in memory-store.ts): newest first.
    return prepared<unknown[], Row>(db, `SELECT m.* FROM memories m WHERE ${where.join(" AND ")} ORDER BY m.rowid DESC LIMIT +?`)
      .all(...params, filter.limit);
  }
  const ranked = rankedSearch<Row>(db, { index: "memories_words", table: "memories", alias: "m", where, params, limit: filter.limit }, parseQuery(query));
  return ranked.length > 0 ? ranked : recallBySubstring(db, query, where, params, filter.limit);
}

/** The recall filters other than the query, on `memories m`. */
function recallFilters(namespace: string, filter: RecallFilter): { where: string[]; params: unknown[] } {
  const where = ["m.namespace = +?"];
  const params: unknown[] = [namespace];
  if (!filter.includeDeleted) where.push("m.deleted = 0");
  if (!filter.includeDisabled) where.push("m.disabled = 0");
  for (const [column, value] of [["task_name", filter.taskName], ["agent_name", filter.agentName], ["source", filter.source]] as const) {
    if (value) {
      where.push(`m.${column} = +?`);
      params.push(value);
    }
  }
  for (const tag of normalizeTags(filter.tags ?? [])) {
    where.push("m.tags LIKE ? ESCAPE '\\'");
    params.push(likeEscape(`,${tag},`));
  }
  if (filter.ids?.length) {
    where.push(`m.id IN (${filter.ids.map(() => "?").join(",")})`);
    params.push(...filter.ids);
  }
  return { where, params };
}

/** The query as one case-insensitive substring (part of a word or an identifier), newest first. */
function recallBySubstring(db: Db, query: string, where: string[], params: unknown[], limit: number): Row[] {
  if (query.length < TRIGRAM) {
    return prepared<unknown[], Row>(db, `SELECT m.* FROM memories m WHERE ${where.join(" AND ")} AND (lower(m.content) LIKE ? ESCAPE '\\' OR m.tags LIKE ? ESCAPE '\\') ORDER BY m.rowid DESC LIMIT ?`)
      .all(...params, likeEscape(query), likeEscape(query), limit);
  }
  // Walk the trigram index newest first and stop at the limit.
  return prepared<unknown[], Row>(db, `SELECT m.* FROM memories_fts f JOIN memories m ON m.rowid = f.rowid WHERE memories_fts MATCH ? AND ${where.join(" AND ")} ORDER BY f.rowid DESC LIMIT ?`)
    .all(ftsString(query), ...params, limit);
}
