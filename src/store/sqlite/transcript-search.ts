import type { TranscriptSearch, TranscriptSearchResult } from "../memory-store.ts";
import { prepared, type Db } from "./db.ts";
import { ftsString, likeEscape, parseQuery, rankedSearch, TRIGRAM } from "./term-search.ts";

type Row = Record<string, unknown>;

/**
 * Transcript messages of a namespace that match a search, best ranked first, or, when no word of
 * it ranks, those holding every term as a substring, newest first; each with a snippet around the match.
 */
export function findTranscriptMatches(db: Db, namespace: string, search: TranscriptSearch): TranscriptSearchResult[] {
  const where = ["t.namespace = +?", "t.content != ''"];
  const params: unknown[] = [namespace];
  if (search.sessionName) {
    where.push("t.session_name = +?");
    params.push(search.sessionName);
  }
  if (search.excludeSessionName) {
    where.push("t.session_name != ?");
    params.push(search.excludeSessionName);
  }
  if (search.roles?.length) {
    where.push(`t.role IN (${search.roles.map(() => "?").join(",")})`);
    params.push(...search.roles);
  }
  const query = parseQuery(search.query);
  const ranked = rankedSearch<Row>(db, { index: "transcript_words", table: "transcript_messages", alias: "t", where, params, limit: search.limit }, query);
  const terms = [...query.phrases, ...query.words];
  const rows = ranked.length > 0 ? ranked : searchBySubstring(db, terms, where, params, search.limit);
  return rows.map((row) => ({
    sessionName: row.session_name as string,
    messageId: row.id as number,
    role: row.role as string,
    ...(row.name ? { name: row.name as string } : {}),
    snippet: snippet(row.content as string, terms, search.maxSnippetLength),
    createdAt: row.created_at as string,
  }));
}

/** Every term as a case-insensitive substring, newest first. */
function searchBySubstring(db: Db, terms: string[], filters: string[], filterParams: unknown[], limit: number): Row[] {
  const long = terms.filter((t) => t.length >= TRIGRAM);
  // With trigram terms, walk the index newest first and stop at the limit: common words must not
  // make SQLite collect every match before ordering.
  const from = long.length > 0 ? "transcript_fts f JOIN transcript_messages t ON t.id = f.rowid" : "transcript_messages t";
  const where = long.length > 0 ? ["transcript_fts MATCH ?", ...filters] : [...filters];
  const params: unknown[] = long.length > 0 ? [long.map(ftsString).join(" AND "), ...filterParams] : [...filterParams];
  for (const term of terms.filter((t) => t.length < TRIGRAM)) {
    where.push("lower(t.content) LIKE ? ESCAPE '\\'");
    params.push(likeEscape(term));
  }
  return prepared<unknown[], Row>(db, `SELECT t.* FROM ${from} WHERE ${where.join(" AND ")} ORDER BY ${long.length > 0 ? "f.rowid" : "t.id"} DESC LIMIT ?`)
    .all(...params, limit);
}

/** A window around the first match: about a third of it before the match, `…` where cut. */
export function snippet(text: string, terms: string[], max: number): string {
  const flat = text.replace(/\s+/g, " ").trim();
  if (flat.length <= max) return flat;
  const lower = flat.toLowerCase();
  let at = -1;
  for (const term of terms) {
    at = lower.indexOf(term.toLowerCase());
    if (at >= 0) break;
    const word = term.split(/\s+/).find((w) => w.length >= 3);
    if (word && (at = lower.indexOf(word.toLowerCase())) >= 0) break;
  }
  if (at < 0) return `${flat.slice(0, max)}…`;
  const start = Math.max(0, Math.min(at - Math.floor(max / 3), flat.length - max));
  const end = Math.min(flat.length, start + max);
  return `${start > 0 ? "…" : ""}${flat.slice(start, end)}${end < flat.length ? "…" : ""}`;
}
