import { hash } from "node:crypto";

/** JSON with object keys sorted at every level, so equal values hash equally. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value && typeof value === "object") {
    return `{${Object.keys(value).sort().map((key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`).join(",")}}`;
  }
  return JSON.stringify(value ?? null);
}

/** One-shot: half the cost of a Hash object for the short texts hashed on every worker call (its token). */
export function sha256Hex(text: string): string {
  return hash("sha256", text, "hex");
}

/** `sha256:<hex>` of a value's canonical JSON: the digest form provenance and recordings use. */
export function canonicalDigest(value: unknown): string {
  return `sha256:${sha256Hex(canonicalJson(value))}`;
}
