import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { pluralOf, type KindName } from "../resources/kinds.ts";
import type { Resource } from "../resources/meta.ts";
import { SERVER_STAMPED_TASK_FIELDS } from "../resources/task.ts";
import { parseResource, parseSpec } from "../resources/validate.ts";
import { parseYamlDocuments } from "../resources/yaml.ts";
import { errorMessage, OrkaError } from "../util/errors.ts";
import { canonicalJson } from "../util/hash.ts";
import type { ApiClient } from "./client.ts";

/** One file (or stdin) to apply: where it came from, for messages, and its text. */
export interface ApplySource {
  source: string;
  text: string;
}

/**
 * Written in a Tool's `spec.http.url` as the address of the server it is applied to, so examples
 * name no port. Only there: a Secret value, a prompt or a command may mean these characters literally.
 */
export const SERVER_PLACEHOLDER = "${ORKA_SERVER}";

/** `-` is stdin; a directory is every .yaml, .yml and .json file directly in it, in name order. */
export function readApplySources(path: string): ApplySource[] {
  if (path === "-") return [{ source: "stdin", text: readFileSync(0, "utf8") }];
  if (!statSync(path).isDirectory()) return [{ source: path, text: readFileSync(path, "utf8") }];
  const files = readdirSync(path).filter((name) => /\.(ya?ml|json)$/.test(name)).sort();
  if (files.length === 0) throw new OrkaError("invalid_argument", `${path} has no .yaml, .yml or .json files to apply`);
  return files.map((name) => ({ source: join(path, name), text: readFileSync(join(path, name), "utf8") }));
}

type Action = "create" | "update" | "unchanged" | "refuse";

interface PlannedObject {
  label: string;
  kind: KindName;
  path: string;
  body: unknown;
  scoped: ApiClient;
  action: Action;
}

const REPORTED: Record<Action, string> = {
  create: "created",
  update: "configured",
  unchanged: "unchanged",
  refuse: "refused",
};

/**
 * `orka apply`: validates every document and compares each with what the server holds before
 * writing anything, so a bad file or a changed Task changes nothing; then creates what is new and
 * updates what differs. An object whose spec, labels and annotations already match is left alone.
 */
export async function applyDocuments(api: ApiClient, sources: ApplySource[], report: (line: string) => void): Promise<void> {
  const planned: PlannedObject[] = [];
  for (const { source, text } of sources) {
    const documents = parseYamlDocuments(text, source).map((doc) => withServerAddress(doc, api.server));
    const objects = documents.map((doc, i) => {
      try {
        return parseResource(doc);
      } catch (err) {
        throw new OrkaError("invalid_argument", `${source}: document ${i + 1}: ${errorMessage(err)}`);
      }
    });
    for (const [i, object] of objects.entries()) planned.push(await plan(api, documents[i], object));
  }
  const refused = planned.filter((p) => p.action === "refuse");
  if (refused.length > 0) {
    const reasons = refused.map((p) => `${p.label}: a Task's spec cannot change after creation; delete it first (${deleteCommand(p)}) or give the new Task another name`);
    throw new OrkaError("invalid_argument", `${reasons.join("; ")}. Nothing was applied.`);
  }
  for (const object of planned) {
    if (object.action === "create") await object.scoped.post(pluralOf(object.kind), object.body);
    if (object.action === "update") await object.scoped.put(object.path, object.body);
    const runsOnce = object.kind === "Task" && object.action === "unchanged" ? " (a Task runs once; delete it to run it again)" : "";
    report(`${object.label} ${REPORTED[object.action]}${runsOnce}`);
  }
}

/** Fills in a Tool's `spec.http.url` only; the address is inserted as it is (a function replacement expands no `$&`). */
function withServerAddress(doc: unknown, server: string): Record<string, unknown> {
  const document = doc as { kind?: unknown; spec?: { http?: { url?: unknown } } } | null;
  const http = document?.spec?.http;
  if (document?.kind !== "Tool" || typeof http?.url !== "string") return doc as Record<string, unknown>;
  return { ...document, spec: { ...document.spec, http: { ...http, url: http.url.replaceAll(SERVER_PLACEHOLDER, () => server) } } };
}

/** The command that deletes the object in the namespace it was applied to. */
function deleteCommand({ label, scoped }: PlannedObject): string {
  const namespace = scoped.namespace ? ` -n ${scoped.namespace}` : "";
  return `orka delete ${label.replace("/", " ")}${namespace}`;
}

async function plan(api: ApiClient, raw: Record<string, unknown>, object: Resource): Promise<PlannedObject> {
  const kind = object.kind as KindName;
  const scoped = api.withNamespace((raw.metadata as { namespace?: string } | undefined)?.namespace);
  const path = `${pluralOf(kind)}/${object.metadata.name}`;
  const body = kind === "Secret" ? raw : { metadata: raw.metadata, spec: raw.spec };
  const existing = await scoped.get<Partial<Resource>>(path).catch((err) => (err instanceof OrkaError && err.code === "not_found" ? undefined : Promise.reject(err)));
  const planned = { label: `${kind.toLowerCase()}/${object.metadata.name}`, kind, path, body, scoped };
  if (!existing) return { ...planned, action: "create" };
  if (kind === "Task") return { ...planned, action: sameSpec(kind, object, existing) ? "unchanged" : "refuse" };
  // The server returns nothing derived from a Secret's values (a digest would let a reader test
  // guesses), so an unchanged Secret cannot be told from a changed one: it is written every time.
  if (kind === "Secret" || !sameSpec(kind, object, existing) || !sameMetadata(object, existing)) return { ...planned, action: "update" };
  return { ...planned, action: "unchanged" };
}

function same(a: unknown, b: unknown): boolean {
  // Through JSON first: an absent key and one set to undefined are the same object.
  return canonicalJson(JSON.parse(JSON.stringify(a ?? null))) === canonicalJson(JSON.parse(JSON.stringify(b ?? null)));
}

/** Both specs through the same schema, so defaults and the fields the server stamps do not count as a change. */
function sameSpec(kind: KindName, desired: Resource, existing: Partial<Resource>): boolean {
  const spec = { ...(parseSpec(kind, existing.spec) as Record<string, unknown>) };
  if (kind === "Task") for (const field of SERVER_STAMPED_TASK_FIELDS) delete spec[field];
  return same(desired.spec, spec);
}

/** Labels and annotations the file leaves out are kept by the server, so only the ones it sets count. */
function sameMetadata(desired: Resource, existing: Partial<Resource>): boolean {
  const { labels, annotations } = desired.metadata;
  return (labels === undefined || same(labels, existing.metadata?.labels)) && (annotations === undefined || same(annotations, existing.metadata?.annotations));
}
