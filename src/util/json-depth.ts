/** Deeper than any schema or tool arguments need, far below what would overflow a recursive walk. */
export const MAX_NESTING_DEPTH = 100;

/**
 * True when a parsed JSON or YAML value nests objects and arrays deeper than `max` levels. Walks
 * with its own stack, so a hostile value cannot overflow the call stack here; refusing it early
 * keeps it away from everything that recurses (JSON.stringify, zod, structuredClone).
 */
export function nestsDeeperThan(value: unknown, max: number): boolean {
  const pending: [unknown, number][] = [[value, 1]];
  while (pending.length > 0) {
    const [node, depth] = pending.pop()!;
    if (node === null || typeof node !== "object") continue;
    if (depth > max) return true;
    for (const child of Object.values(node)) pending.push([child, depth + 1]);
  }
  return false;
}
