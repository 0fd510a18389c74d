import { z } from "zod";
import { objectMetaSchema } from "./meta.ts";

/** A `v1 Secret` as users write it: `data` base64-encoded, or `stringData` in plain text. */
export const secretDocumentSchema = z.strictObject({
  apiVersion: z.literal("v1"),
  kind: z.literal("Secret"),
  metadata: objectMetaSchema,
  type: z.string().default("Opaque"),
  data: z.record(z.string(), z.base64({ message: "must be base64" })).optional(),
  stringData: z.record(z.string(), z.string()).optional(),
});
export type SecretDocument = z.infer<typeof secretDocumentSchema>;

/** How Orka keeps a Secret: plain values (encrypted at rest by the store), never returned by the API. */
export interface SecretSpec {
  type: string;
  data: Record<string, string>;
}

export function secretSpecFromDocument(doc: SecretDocument): SecretSpec {
  const data: Record<string, string> = {};
  for (const [key, value] of Object.entries(doc.data ?? {})) data[key] = Buffer.from(value, "base64").toString("utf8");
  Object.assign(data, doc.stringData ?? {});
  return { type: doc.type, data };
}

/** What anyone outside the controller and runner may see of a Secret: names, keys and type. */
export function describeSecret(secret: { metadata: { name: string; namespace: string; creationTimestamp?: string }; spec: SecretSpec }) {
  return {
    name: secret.metadata.name,
    namespace: secret.metadata.namespace,
    type: secret.spec.type,
    keys: Object.keys(secret.spec.data).sort(),
    creationTimestamp: secret.metadata.creationTimestamp,
  };
}
