/** Tags are kept as `,a,b,` so one LIKE finds a whole tag. */
export const packTags = (tags: string[] | undefined) => (tags?.length ? `,${normalizeTags(tags).join(",")},` : "");
export const unpackTags = (packed: unknown) => (typeof packed === "string" && packed ? packed.split(",").filter(Boolean) : undefined);
export const normalizeTags = (tags: string[]) => [...new Set(tags.map((t) => t.trim().toLowerCase()).filter(Boolean))];

/** Tags from the first `Tags: a, b` line of a description (later such lines are ignored). */
export function tagsLine(description: string | undefined): string[] | undefined {
  const line = description?.split("\n").find((l) => /^\s*tags\s*:/i.test(l));
  return line ? normalizeTags(line.replace(/^\s*tags\s*:/i, "").split(",")) : undefined;
}
