/**
 * JSON that someone outside (a client, a script file, a model) may nest arbitrarily deep.
 * `JSON.parse` copes with any depth, but `JSON.stringify`, zod and other recursive code overflow
 * the stack at a few thousand levels, so depth is measured without recursion and refused early.
 */

/**
 * The one nesting limit for outside JSON: request bodies, YAML documents, script files and tool
 * call arguments nest objects and arrays at most this many levels. No schema or tool needs more.
 */
export const MAX_JSON_DEPTH = 64;

/**
 * True when a parsed JSON or YAML value nests objects and arrays deeper than `max` levels, walked with its
 * own stack. Every request body passes through here, so the walk allocates nothing per node.
 */
export function nestsDeeperThan(value: unknown, max: number): boolean {
  const nodes: object[] = [];
  const depths: number[] = [];
  const visit = (child: unknown, depth: number) => {
    if (child !== null && typeof child === "object") {
      nodes.push(child);
      depths.push(depth);
    }
  };
  visit(value, 1);
  while (nodes.length > 0) {
    const node = nodes.pop() as Record<string, unknown>;
    const depth = depths.pop()!;
    if (depth > max) return true;
    if (Array.isArray(node)) for (const child of node) visit(child, depth + 1);
    else for (const key in node) if (Object.hasOwn(node, key)) visit(node[key], depth + 1);
  }
  return false;
}

/** How deeply nested the objects and arrays of a JSON text are, read without parsing it. */
export function jsonDepth(text: string): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    if (inString) {
      if (char === "\\") i++;
      else if (char === '"') inString = false;
    } else if (char === '"') inString = true;
    else if (char === "{" || char === "[") deepest = Math.max(deepest, ++depth);
    else if (char === "}" || char === "]") depth--;
  }
  return deepest;
}

/** A punctuation mark waiting on the stack of `stringifyJson`, told apart from a JSON string value. */
class Mark {
  readonly text: string;
  constructor(text: string) {
    this.text = text;
  }
}
const COMMA = new Mark(",");
const CLOSE_OBJECT = new Mark("}");
const CLOSE_ARRAY = new Mark("]");

/** `JSON.stringify` of a parsed JSON value (no cycles, no toJSON), at any depth. */
export function stringifyJson(value: unknown): string {
  const out: string[] = [];
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const item = stack.pop();
    if (item instanceof Mark) out.push(item.text);
    else if (Array.isArray(item)) {
      out.push("[");
      stack.push(CLOSE_ARRAY);
      for (let i = item.length - 1; i >= 0; i--) stack.push(item[i] ?? null, ...(i > 0 ? [COMMA] : []));
    } else if (item !== null && typeof item === "object") {
      const entries = Object.entries(item).filter(([, v]) => v !== undefined);
      out.push("{");
      stack.push(CLOSE_OBJECT);
      for (let i = entries.length - 1; i >= 0; i--) stack.push(entries[i][1], new Mark(`${JSON.stringify(entries[i][0])}:`), ...(i > 0 ? [COMMA] : []));
    } else out.push(JSON.stringify(item) ?? "null");
  }
  return out.join("");
}

/** Freezes a parsed JSON value and everything in it, walked with its own stack; returns the value. */
export function deepFreeze<T>(value: T): T {
  const pending: unknown[] = [value];
  while (pending.length > 0) {
    const node = pending.pop();
    if (node === null || typeof node !== "object" || Object.isFrozen(node)) continue;
    Object.freeze(node);
    for (const child of Object.values(node)) pending.push(child);
  }
  return value;
}
