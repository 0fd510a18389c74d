// Validates GitHub REST response bodies against the operation schemas of GitHub's official OpenAPI
// description (@octokit/openapi), so a peer that drifts from the real GitHub fails its tests.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { Ajv, type ValidateFunction } from "ajv";
import addFormatsModule from "ajv-formats";
import { OrkaError } from "../../src/util/errors.ts";

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

interface Operation {
  responses: Record<string, { content?: Record<string, { schema: object }> }>;
}

export type Method = "get" | "post" | "put" | "patch" | "delete";

export interface OpenApiValidator {
  /** The schema errors of `body` as the `status` response of `method path`; empty when it conforms. */
  errors(method: Method, path: string, status: number, body: unknown): string[];
}

/**
 * OpenAPI 3.0's `nullable` beside no `type` (GitHub writes it next to `allOf`/`anyOf`) has no meaning to
 * a JSON-schema validator; it says "this schema, or null".
 */
function withNullAlternatives(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(withNullAlternatives);
  if (!schema || typeof schema !== "object") return schema;
  const { nullable, ...rest } = schema as Record<string, unknown>;
  const walked = Object.fromEntries(Object.entries(rest).map(([k, v]) => [k, withNullAlternatives(v)]));
  if (nullable === undefined) return walked;
  // Ajv checks `enum` before it lets a null through, so a nullable enum lists null itself.
  if (nullable && Array.isArray(rest.enum)) walked.enum = [...rest.enum, null];
  if ("type" in rest) return { ...walked, nullable };
  return nullable ? { anyOf: [walked, { type: "null" }] } : walked;
}

/** Loads the dereferenced api.github.com description once and keeps only the operations named. */
export function loadGithubOpenApi(operations: [Method, string][]): OpenApiValidator {
  const file = createRequire(import.meta.url).resolve("@octokit/openapi/generated/api.github.com.deref.json");
  const spec = JSON.parse(readFileSync(file, "utf8")) as { paths: Record<string, Record<string, Operation>> };
  const kept = new Map<string, Operation>();
  for (const [method, path] of operations) {
    const operation = spec.paths[path]?.[method];
    if (!operation) throw new OrkaError("invalid_argument", `GitHub's OpenAPI description has no operation ${method.toUpperCase()} ${path}: name it as the description spells it`);
    kept.set(`${method} ${path}`, operation);
  }
  const ajv = new Ajv({ strict: false, allErrors: true, logger: false });
  addFormats(ajv);
  const compiled = new Map<string, ValidateFunction>();
  return {
    errors(method, path, status, body) {
      const operation = kept.get(`${method} ${path}`);
      if (!operation) return [`operation ${method.toUpperCase()} ${path} was not loaded`];
      const key = `${method} ${path} ${status}`;
      let validate = compiled.get(key);
      if (!validate) {
        const schema = operation.responses[String(status)]?.content?.["application/json"]?.schema;
        if (!schema) return [`GitHub documents no JSON ${status} response for ${method.toUpperCase()} ${path}`];
        validate = ajv.compile(withNullAlternatives(schema) as object);
        compiled.set(key, validate);
      }
      return validate(body) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath || "/"} ${e.message ?? ""}`);
    },
  };
}
