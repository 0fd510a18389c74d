import { ANNOTATION, LABEL, labelValue } from "../resources/meta.ts";
import type { TaskSpec } from "../resources/task.ts";
import type { TransactionClaims } from "./transaction-token.ts";

type Metadata = { labels?: Record<string, string>; annotations?: Record<string, string> };

/**
 * Provenance: spec.transaction, its labels and annotations, from a verified token (or, for a delegated
 * child, from its parent's stamped transaction). The raw token is never kept.
 */
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
