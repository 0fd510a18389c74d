import { OrkaError } from "./errors.ts";

/**
 * The longest duration a spec may give: the longest delay a Node timer keeps (2^31-1 ms, about 596h).
 * A longer one does not wait longer, it overflows and fires at once (`AbortSignal.timeout` included).
 */
export const MAX_DURATION_MS = 2 ** 31 - 1;

const unitMs: Record<string, number> = { ns: 1e-6, us: 1e-3, "µs": 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
const durationPattern = /^(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/;

/** Parses a Go-syntax duration such as `30s`, `1h30m` or `250ms` into milliseconds. */
export function parseDuration(text: string): number {
  let rest = text.trim();
  if (rest === "0") return 0;
  if (rest === "") throw new OrkaError("invalid_argument", `invalid duration "${text}": empty`);
  let total = 0;
  while (rest.length > 0) {
    const match = durationPattern.exec(rest);
    if (!match) {
      throw new OrkaError("invalid_argument", `invalid duration "${text}": use Go syntax such as 30s, 5m or 1h30m`);
    }
    total += Number(match[1]) * unitMs[match[2]];
    rest = rest.slice(match[0].length);
  }
  return Math.round(total);
}

export function isDuration(text: string): boolean {
  try {
    parseDuration(text);
    return true;
  } catch {
    return false;
  }
}

/** Formats milliseconds the way Go prints a duration (`1m30s`, `2s`, `150ms`). */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${ms}ms`;
  const hours = Math.floor(ms / 3_600_000);
  const minutes = Math.floor((ms % 3_600_000) / 60_000);
  const seconds = (ms % 60_000) / 1000;
  return `${hours ? `${hours}h` : ""}${hours || minutes ? `${minutes}m` : ""}${seconds}s`;
}
