import { createHash } from "node:crypto";
import { ANNOTATION, LABEL } from "../resources/meta.ts";
import type { TaskSpec } from "../resources/task.ts";
import type { TransactionClaims } from "./transaction-token.ts";

type Metadata = { labels?: Record<string, string>; annotations?: Record<string, string> };

/** Any text as a valid label value: itself when valid, else a cleaned prefix and a short hash. */
export function labelValue(text: string): string {
  if (text.length <= 63 && /^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?$/.test(text)) return text;
  const hash = createHash("sha256").update(text).digest("hex").slice(0, 12);
  const prefix = text.slice(0, 48).replace(/[^-A-Za-z0-9_.]+/g, "-").replace(/^[^A-Za-z0-9]+|[^A-Za-z0-9]+$/g, "");
  return prefix ? `${prefix}-${hash}` : hash;
}

/** B6: spec.transaction, its labels and annotations, from a verified token. The raw token is never kept. */
export function stampTransaction(spec: TaskSpec, metadata: Metadata, claims: TransactionClaims): void {
  spec.transaction = { ...claims, context: { ...claims.context } };
  metadata.labels = { ...metadata.labels, [LABEL.transactionId]: labelValue(claims.id), [LABEL.authProfile]: claims.profile };
  metadata.annotations = {
    ...metadata.annotations,
    [ANNOTATION.transactionId]: claims.id,
    [ANNOTATION.transactionIssuer]: claims.issuer,
    [ANNOTATION.transactionSubject]: claims.subject,
    [ANNOTATION.transactionRequestingWorkload]: claims.requestingWorkload,
    [ANNOTATION.transactionScope]: claims.scope,
    [ANNOTATION.transactionContextDigest]: claims.contextDigest,
    [ANNOTATION.contextTokenProfile]: claims.profile,
    ...(claims.requesterContextDigest ? { [ANNOTATION.requesterContextDigest]: claims.requesterContextDigest } : {}),
  };
}

/** A delegated child carries its parent's provenance labels and annotations as well as its spec fields. */
export function inheritedTransactionMetadata(parent: Metadata): Metadata {
  const pick = (source: Record<string, string> | undefined, keys: string[]) =>
    Object.fromEntries(Object.entries(source ?? {}).filter(([key]) => keys.includes(key)));
  return {
    labels: pick(parent.labels, [LABEL.transactionId, LABEL.authProfile]),
    annotations: pick(parent.annotations, [
      ANNOTATION.transactionId, ANNOTATION.transactionIssuer, ANNOTATION.transactionSubject, ANNOTATION.transactionRequestingWorkload,
      ANNOTATION.transactionScope, ANNOTATION.transactionContextDigest, ANNOTATION.contextTokenProfile, ANNOTATION.requesterContextDigest,
    ]),
  };
}
