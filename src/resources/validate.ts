import { z } from "zod";
import { OrkaError } from "../util/errors.ts";
import { orkaKind, type KindName } from "./kinds.ts";
import { API_VERSION, objectMetaSchema, type Resource } from "./meta.ts";
import { secretDocumentSchema, secretSpecFromDocument } from "./secret.ts";

/** Turns the first zod issue into "field: what is wrong", the message users see. */
export function describeZodError(error: z.ZodError, prefix = ""): { field: string; message: string } {
  const issue = error.issues[0];
  const field = [prefix, ...issue.path.map(String)].filter(Boolean).join(".");
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

const envelopeSchema = z.object({
  apiVersion: z.string({ message: "is required" }),
  kind: z.string({ message: "is required" }),
});

/** Validates one document of any kind (Secrets included) and fills its defaults. */
export function parseResource(doc: unknown): Resource {
  const { apiVersion, kind } = parseWith(envelopeSchema, doc);
  if (kind === "Secret") {
    const secret = parseWith(secretDocumentSchema, doc);
    return {
      apiVersion: "v1",
      kind: "Secret",
      metadata: secret.metadata as Resource["metadata"],
      spec: secretSpecFromDocument(secret),
    };
  }
  const info = orkaKind(kind);
  if (!info) {
    throw new OrkaError("invalid_argument", `kind: unknown kind "${kind}" (expected Provider, Agent, Task, Tool, Skill or Secret)`, {
      field: "kind",
    });
  }
  if (apiVersion !== API_VERSION) {
    throw new OrkaError("invalid_argument", `apiVersion: must be ${API_VERSION} for ${kind}`, { field: "apiVersion" });
  }
  const body = doc as Record<string, unknown>;
  const metadata = parseWith(objectMetaSchema, body.metadata ?? {}, "metadata");
  const spec = parseWith(info.spec, body.spec ?? {}, "spec");
  return { apiVersion, kind, metadata: metadata as Resource["metadata"], spec };
}

/** Validates a spec for a known kind (the REST create/update paths). */
export function parseSpec(kind: KindName, spec: unknown): unknown {
  if (kind === "Secret") throw new OrkaError("internal", "secrets have no spec");
  return parseWith(orkaKind(kind)!.spec, spec ?? {}, "spec");
}
