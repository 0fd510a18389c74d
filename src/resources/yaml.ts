import { parseAllDocuments, stringify } from "yaml";
import { OrkaError } from "../util/errors.ts";
import { MAX_JSON_DEPTH, nestsDeeperThan } from "../util/deep-json.ts";

/** Reads every non-empty document of a multi-document YAML (or JSON) text. */
export function parseYamlDocuments(text: string, source = "input"): unknown[] {
  const docs: unknown[] = [];
  for (const [index, doc] of parseAllDocuments(text).entries()) {
    if (doc.errors.length > 0) {
      throw new OrkaError("invalid_argument", `${source}: document ${index + 1}: ${doc.errors[0].message}`);
    }
    const value = doc.toJS();
    if (value === null || value === undefined) continue;
    if (nestsDeeperThan(value, MAX_JSON_DEPTH)) {
      throw new OrkaError("invalid_argument", `${source}: document ${index + 1}: nests more than ${MAX_JSON_DEPTH} levels deep; flatten it`);
    }
    if (Array.isArray(value)) docs.push(...value);
    else if (typeof value === "object" && (value as { kind?: string }).kind === "List") docs.push(...((value as { items?: unknown[] }).items ?? []));
    else docs.push(value);
  }
  return docs;
}

export function toYamlDocuments(objects: unknown[]): string {
  return objects.map((o) => stringify(o, { lineWidth: 0 })).join("---\n");
}
