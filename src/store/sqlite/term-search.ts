import { prepared, type Db } from "./db.ts";

/**
 * Ranked full-text search over a word index (FTS5, porter + unicode61), shared by memory recall
 * and transcript search. Every word of a query counts: a row scores the sum of the inverse
 * document frequencies of the words it contains, so rare words weigh most; ties go to the newest
 * row. Quoted phrases must match exactly. See docs/memory.md for why this is not FTS5's bm25().
 */

/** A query as the search sees it: words that rank, phrases that must match. */
export interface ParsedQuery {
  words: string[];
  phrases: string[];
}

/** Words too common to say anything about a row; dropped unless the query has nothing else. */
const STOPWORDS = new Set(
  ("a about an and are as at be been but by can could did do does for from had has have how i if in into is it its " +
    "me my of on or our please should so than that the their them then there these they this to us was we were what " +
    "when where which who whom why will with would you your").split(" "),
);
const hasWordCharacter = (text: string) => /[\p{L}\p{N}]/u.test(text);
const bare = (word: string) => word.toLowerCase().replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu, "");
/** A query's words (and phrases) beyond this many are ignored: each one costs an index walk. */
export const MAX_QUERY_WORDS = 32;

/** `deploy "window for zebra-7" owner?` → words [deploy, owner], phrases ["window for zebra-7"]. */
export function parseQuery(query: string): ParsedQuery {
  const words: string[] = [];
  const phrases: string[] = [];
  // Control characters (NUL among them) would cut an FTS5 string short.
  for (const match of query.replace(/\p{Cc}/gu, " ").matchAll(/"([^"]*)"|(\S+)/g)) {
    if (match[1] !== undefined) {
      if (hasWordCharacter(match[1])) phrases.push(match[1].trim());
    } else if (hasWordCharacter(match[2])) words.push(bare(match[2]));
  }
  const unique = [...new Set(words)];
  const meaningful = unique.filter((word) => !STOPWORDS.has(word));
  return {
    words: (meaningful.length > 0 || phrases.length > 0 ? meaningful : unique).slice(0, MAX_QUERY_WORDS),
    phrases: phrases.slice(0, MAX_QUERY_WORDS),
  };
}

/**
 * When no word ranks, searches fall back to substrings: the trigram index finds terms of this many
 * characters or more; shorter ones are matched with LIKE.
 */
export const TRIGRAM = 3;

/** A case-insensitive LIKE pattern for `text` anywhere, its wildcards escaped (use with `ESCAPE '\\'`). */
export const likeEscape = (text: string) => `%${text.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/** Text as one FTS5 string (a phrase to the tokenizer: `zebra-7` → `zebra 7`); raw input never becomes FTS syntax. */
export const ftsString = (text: string) => `"${text.replace(/\p{Cc}/gu, " ").replace(/"/g, '""')}"`;

/**
 * Rows looked at per word, newest first. A word found in fewer rows is seen whole; a more common
 * one counts as found in this many (it weighs little anyway) and adds only its newest rows. This
 * bounds the work of any query, which FTS5's own bm25() does not: it reads every row of every word.
 */
const ROWS_PER_WORD = 1000;

export interface RankedSearch {
  /** The FTS5 word index; its rowid is the searched table's rowid. */
  index: string;
  /** The searched table, and the alias its filters use. */
  table: string;
  alias: string;
  /** Filters on the searched table, ANDed, with their parameters. */
  where: string[];
  params: unknown[];
  limit: number;
}

/** The rows of `search.table` that match `query`, best first; empty when no word matches. */
export function rankedSearch<Row>(db: Db, search: RankedSearch, query: ParsedQuery): Row[] {
  const { index, table, alias, where, params } = search;
  const required = query.phrases.map(ftsString);
  const terms = query.words.length > 0 ? query.words.map((word) => [ftsString(word), ...required].join(" AND ")) : [required.join(" AND ")];
  if (terms[0] === "") return [];
  const matching = prepared<unknown[], number>(
    db,
    `SELECT f.rowid FROM ${index} f JOIN ${table} ${alias} ON ${alias}.rowid = f.rowid
     WHERE ${[`${index} MATCH ?`, ...where].join(" AND ")} ORDER BY f.rowid DESC LIMIT ${ROWS_PER_WORD}`,
  ).pluck();
  const rows = Number(prepared(db, `SELECT max(rowid) FROM ${table}`).pluck().get() ?? 0);
  const scores = new Map<number, number>();
  let everyWord = 0;
  for (const term of terms) {
    const found = matching.all(term, ...params);
    const weight = inverseDocumentFrequency(found.length, rows);
    everyWord += weight;
    for (const rowid of found) scores.set(rowid, (scores.get(rowid) ?? 0) + weight);
  }
  // A row with every word may be older than the newest rows of each common word: look for such
  // rows too, so the best matches are never cut off by the per-word bound.
  if (terms.length > 1) for (const rowid of matching.all(terms.join(" AND "), ...params)) scores.set(rowid, everyWord);
  const best = [...scores].sort(([rowidA, a], [rowidB, b]) => b - a || rowidB - rowidA).slice(0, search.limit);
  if (best.length === 0) return [];
  const byRowid = new Map(
    prepared<unknown[], Row & { _rowid: number }>(db, `SELECT rowid AS _rowid, * FROM ${table} WHERE rowid IN (${best.map(() => "?").join(",")})`)
      .all(...best.map(([rowid]) => rowid))
      .map((row) => [row._rowid, row] as const),
  );
  return best.map(([rowid]) => {
    const { _rowid, ...row } = byRowid.get(rowid)!;
    return row as Row;
  });
}

/**
 * A BM25-style inverse document frequency. `matching` is counted within the search's filters and
 * capped, and `rows` is an upper bound of the table's rows, so the weight orders words by rarity
 * rather than being an exact statistic.
 */
function inverseDocumentFrequency(matching: number, rows: number): number {
  return Math.log(1 + (Math.max(rows, matching) - matching + 0.5) / (matching + 0.5));
}
