import { z } from "zod";
import type { ToolSpec } from "../../resources/tool.ts";
import { guardedRequest, type EgressPolicy } from "../../policy/ssrf.ts";
import { readCapped } from "../../util/read-capped.ts";
import { redact } from "../../policy/redact.ts";
import { parseDuration } from "../../util/duration.ts";
import { errorCodeOfDependency, OrkaError } from "../../util/errors.ts";
import { describeZodError } from "../../resources/validate.ts";

export const MAX_RESPONSE_BYTES = 10 * 1024 * 1024;
const ERROR_BODY_BYTES = 4096;

export interface HttpToolCall {
  spec: NonNullable<ToolSpec["http"]>;
  parameters: Record<string, unknown>;
  arguments: Record<string, unknown>;
  /** The value of authSecretRef, when the Tool has one. */
  authValue?: string;
  /** Where the call may go: the same guard as web_fetch, applied to the URL after interpolation. */
  egress: EgressPolicy;
  signal?: AbortSignal;
  /** The call's key in Orka's effect ledger, sent as `Idempotency-Key` so the Tool's server can tell a repeat too. */
  idempotencyKey?: string;
}

/** Calls a custom HTTP Tool: URL interpolation, JSON body, auth injection, capped response. */
export async function callHttpTool(call: HttpToolCall): Promise<string> {
  validateArguments(call.parameters, call.arguments);
  const body = { ...call.arguments };
  const url = interpolateUrl(call.spec.url, body);
  const headers: Record<string, string> = { "content-type": "application/json", accept: "application/json, text/plain, */*", ...call.spec.headers };
  if (call.idempotencyKey) headers["idempotency-key"] = call.idempotencyKey;
  if (call.authValue !== undefined) {
    if (call.spec.authInject === "body") body[call.spec.authBodyKey!] = call.authValue;
    else headers.authorization = `Bearer ${call.authValue}`;
  }
  // A redirect is answered, not followed: the request carries the Tool's credential, which must not travel on.
  const request = { method: call.spec.method, headers, body: JSON.stringify(body), maxRedirects: 0, timeoutMs: parseDuration(call.spec.timeout), signal: call.signal };
  const response = await guardedRequest(url, call.egress, request, async (answer) => ({ status: answer.statusCode, ...(await readCapped(answer.body, MAX_RESPONSE_BYTES)) }));
  if (response.status < 200 || response.status >= 300) {
    const secrets = call.authValue ? [call.authValue] : [];
    throw new OrkaError(errorCodeOfDependency(response.status), `tool returned HTTP ${response.status}: ${redact(response.body.subarray(0, ERROR_BODY_BYTES).toString("utf8"), secrets)}`);
  }
  return response.body.toString("utf8");
}

/**
 * Puts the `{{param}}` arguments into the URL (each taken out of the body). encodeURIComponent
 * leaves `.` alone, so a path value of `..` (or one that decodes to it) would walk to another path
 * on the Tool's host, with the Tool's credential: such a value is refused.
 */
function interpolateUrl(template: string, body: Record<string, unknown>): string {
  const queryStart = template.search(/[?#]/);
  return template.replace(/\{\{\s*([A-Za-z0-9_.-]+)\s*\}\}/g, (_, name: string, offset: number) => {
    const value = body[name];
    delete body[name];
    const text = value === undefined || value === null ? "" : String(value);
    const inPath = queryStart === -1 || offset < queryStart;
    if (inPath && isDotSegment(text)) throw new OrkaError("invalid_argument", `invalid arguments: ${name} may not be "." or ".." (it is a segment of the URL path); give a name`);
    return encodeURIComponent(text);
  });
}

function isDotSegment(text: string): boolean {
  let decoded = text;
  try {
    decoded = decodeURIComponent(text);
  } catch {
    // a value that does not decode is sent encoded as it is, so only its own text matters
  }
  return [text, decoded].some((segment) => segment === "." || segment === "..");
}

/** A model's arguments checked against a Tool's JSON Schema, refused with what is wrong; a schema zod cannot read is left to the endpoint. */
export function validateArguments(parameters: Record<string, unknown>, args: Record<string, unknown>): void {
  const schema = argumentSchema(parameters);
  if (!schema) return; // a schema zod cannot read is still offered to the model; the endpoint validates
  const result = schema.safeParse(args);
  if (!result.success) throw new OrkaError("invalid_argument", `invalid arguments: ${describeZodError(result.error).message}`);
}

const MAX_CACHED_SCHEMAS = 256;
const argumentSchemas = new Map<string, z.ZodType | undefined>();

/** A Tool's parameters as a zod schema, converted once per distinct schema (the newest few hundred kept); undefined when zod cannot read it. */
function argumentSchema(parameters: Record<string, unknown>): z.ZodType | undefined {
  const key = JSON.stringify(parameters);
  if (argumentSchemas.has(key)) return argumentSchemas.get(key);
  let schema: z.ZodType | undefined;
  try {
    schema = z.fromJSONSchema(parameters as Parameters<typeof z.fromJSONSchema>[0]);
  } catch {
    schema = undefined;
  }
  if (argumentSchemas.size >= MAX_CACHED_SCHEMAS) argumentSchemas.delete(argumentSchemas.keys().next().value!);
  argumentSchemas.set(key, schema);
  return schema;
}
