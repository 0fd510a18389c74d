import { z } from "zod";
import { OrkaError } from "../util/errors.ts";
import { orkaKind, type KindName } from "./kinds.ts";
import { API_VERSION, objectMetaSchema, type Resource } from "./meta.ts";
import { secretDocumentSchema, secretSpecFromDocument } from "./secret.ts";

const joinPath = (...parts: PropertyKey[]) => parts.map(String).filter(Boolean).join(".");

/**
 * Turns zod issues into "field: what is wrong", the message users see. Unknown fields come first
 * and are all named: a misspelt field is usually the cause of every other complaint.
 */
export function describeZodError(error: z.ZodError, prefix = ""): { field: string; message: string } {
  const unknown = error.issues.flatMap((issue) => (issue.code === "unrecognized_keys" ? issue.keys.map((key) => joinPath(prefix, ...issue.path, key)) : []));
  if (unknown.length > 0) {
    const quoted = unknown.map((field) => `"${field}"`).join(", ");
    const message = `unknown field${unknown.length > 1 ? "s" : ""} ${quoted}: remove ${unknown.length > 1 ? "them" : "it"} or correct the spelling`;
    return { field: unknown[0], message };
  }
  const issue = error.issues[0];
  const field = joinPath(prefix, ...issue.path);
  return { field, message: field ? `${field}: ${issue.message}` : issue.message };
}

export function parseWith<T>(schema: z.ZodType<T>, value: unknown, prefix = ""): T {
  const result = schema.safeParse(value);
  if (!result.success) {
    const { field, message } = describeZodError(result.error, prefix);
    throw new OrkaError("invalid_argument", message, { field });
  }
  return result.data;
}

/** Enough of a document to know which schema checks the rest. */
const kindSchema = z.looseObject({ kind: z.string({ message: "is required" }) });

/** The top level of every document but a Secret; `status` is written by the controller only, so it is accepted and ignored. */
const envelopeSchema = z.strictObject({
  apiVersion: z.string({ message: "is required" }),
  kind: z.string({ message: "is required" }),
  metadata: z.unknown().optional(),
  spec: z.unknown().optional(),
  status: z.unknown().optional(),
});

/** Validates one document of any kind (Secrets included) and fills its defaults. */
export function parseResource(doc: unknown): Resource {
  const { kind } = parseWith(kindSchema, doc);
  if (kind === "Secret") {
    const secret = parseWith(secretDocumentSchema, doc);
    return {
      apiVersion: "v1",
      kind: "Secret",
      metadata: secret.metadata as Resource["metadata"],
      spec: secretSpecFromDocument(secret),
    };
  }
  const { apiVersion, metadata, spec } = parseWith(envelopeSchema, doc);
  const info = orkaKind(kind);
  if (!info) {
    throw new OrkaError("invalid_argument", `kind: unknown kind "${kind}" (expected Provider, Agent, Task, Tool, Skill or Secret)`, {
      field: "kind",
    });
  }
  if (apiVersion !== API_VERSION) {
    throw new OrkaError("invalid_argument", `apiVersion: must be ${API_VERSION} for ${kind}`, { field: "apiVersion" });
  }
  return {
    apiVersion,
    kind,
    metadata: parseWith(objectMetaSchema, metadata ?? {}, "metadata") as Resource["metadata"],
    spec: parseWith(info.spec, spec ?? {}, "spec"),
  };
}

/** Validates a spec for a known kind (the REST create/update paths). */
export function parseSpec(kind: KindName, spec: unknown): unknown {
  if (kind === "Secret") throw new OrkaError("internal", "secrets have no spec");
  return parseWith(orkaKind(kind)!.spec, spec ?? {}, "spec");
}
