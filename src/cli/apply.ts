import { pluralOf, type KindName } from "../resources/kinds.ts";
import { parseResource } from "../resources/validate.ts";
import { parseYamlDocuments } from "../resources/yaml.ts";
import { errorMessage } from "../util/errors.ts";
import { ApiError, type ApiClient } from "./client.ts";

/**
 * `orka apply`: validates every document first (so a bad file changes nothing), then creates or
 * updates each in order. Tasks run once, so an existing Task is left as it is.
 */
export async function applyDocuments(api: ApiClient, text: string, source: string, report: (line: string) => void): Promise<void> {
  const documents = parseYamlDocuments(text, source) as Record<string, unknown>[];
  const objects = documents.map((doc, i) => {
    try {
      return parseResource(doc);
    } catch (err) {
      throw new Error(`${source}: document ${i + 1}: ${errorMessage(err)}`);
    }
  });
  for (const [i, object] of objects.entries()) {
    const raw = documents[i];
    const kind = object.kind as KindName;
    const scoped = api.withNamespace((raw.metadata as { namespace?: string } | undefined)?.namespace);
    const path = `${pluralOf(kind)}/${object.metadata.name}`;
    const body = kind === "Secret" ? raw : { metadata: raw.metadata, spec: raw.spec };
    const exists = await scoped.get(path).then(
      () => true,
      (err) => (err instanceof ApiError && err.status === 404 ? false : Promise.reject(err)),
    );
    const label = `${kind.toLowerCase()}/${object.metadata.name}`;
    if (exists && kind === "Task") {
      report(`${label} unchanged (a Task runs once; delete it to run it again)`);
      continue;
    }
    if (exists) await scoped.put(path, body);
    else await scoped.post(pluralOf(kind), body);
    report(`${label} ${exists ? "configured" : "created"}`);
  }
}
