import { sha256Hex } from "../util/hash.ts";
import { formatDuration, MAX_DURATION_MS, parseDuration } from "../util/duration.ts";
import { z } from "zod";

export const API_GROUP = "core.orka.ai";
export const API_VERSION = `${API_GROUP}/v1alpha1`;
export const DEFAULT_NAMESPACE = "default";

/** The longest object name (an RFC 1123 subdomain); every route that takes a name must reach it. */
export const MAX_NAME_LENGTH = 253;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** RFC 1123 subdomain: what Kubernetes accepts as an object name. */
export const objectName = z
  .string()
  .min(1, "must not be empty")
  .max(MAX_NAME_LENGTH, `must be at most ${MAX_NAME_LENGTH} characters`)
  .regex(DNS_SUBDOMAIN, "must be lowercase letters, digits, '-' or '.', starting and ending with a letter or digit");

/** RFC 1123 label: what Kubernetes accepts as a namespace. */
export const namespaceName = z
  .string()
  .max(63, "must be at most 63 characters")
  .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, "must be lowercase letters, digits or '-', starting and ending with a letter or digit");

export const ownerReferenceSchema = z.strictObject({
  apiVersion: z.string(),
  kind: z.string(),
  name: z.string(),
  uid: z.string(),
  controller: z.boolean().optional(),
  blockOwnerDeletion: z.boolean().optional(),
});
export type OwnerReference = z.infer<typeof ownerReferenceSchema>;

/** A label value, and the name part of a label or annotation key: at most 63 characters (Kubernetes). */
const LABEL_TEXT = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const MAX_LABELS = 64;
const MAX_ANNOTATIONS_BYTES = 256 * 1024;

/** Kubernetes' qualified name: `[prefix/]name`, the prefix a DNS subdomain, the name 1–63 characters. */
function qualifiedNameProblem(key: string): string | undefined {
  const slash = key.lastIndexOf("/");
  const prefix = slash >= 0 ? key.slice(0, slash) : undefined;
  const name = key.slice(slash + 1);
  if (prefix !== undefined && (prefix.length > MAX_NAME_LENGTH || !DNS_SUBDOMAIN.test(prefix))) {
    return `key "${key}": the prefix must be a lowercase DNS subdomain such as example.com`;
  }
  if (name.length === 0 || name.length > 63 || !LABEL_TEXT.test(name)) {
    return `key "${key}": the name must be 1-63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit`;
  }
  return undefined;
}

const keysProblem = (map: Record<string, string>) => Object.keys(map).map(qualifiedNameProblem).find(Boolean);

function labelsProblem(labels: Record<string, string>): string | undefined {
  const count = Object.keys(labels).length;
  if (count > MAX_LABELS) return `${count} labels; at most ${MAX_LABELS} are allowed`;
  const bad = Object.entries(labels).find(([, value]) => value.length > 63 || !LABEL_TEXT.test(value));
  const badValue = bad && `value of "${bad[0]}": at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit`;
  return keysProblem(labels) ?? badValue;
}

function annotationsProblem(annotations: Record<string, string>): string | undefined {
  const bytes = Object.entries(annotations).reduce((sum, [key, value]) => sum + Buffer.byteLength(key) + Buffer.byteLength(value), 0);
  if (bytes > MAX_ANNOTATIONS_BYTES) return `${bytes} bytes in total; annotations may hold at most ${MAX_ANNOTATIONS_BYTES} (256 KiB)`;
  return keysProblem(annotations);
}

/** A string map (labels, annotations) with the rules Kubernetes gives it. */
const checkedMap = (problem: (map: Record<string, string>) => string | undefined) =>
  z.record(z.string(), z.string()).superRefine((map, ctx) => {
    const message = problem(map);
    if (message) ctx.addIssue({ code: "custom", message });
  });

export const objectMetaSchema = z.strictObject({
  name: objectName,
  namespace: namespaceName.default(DEFAULT_NAMESPACE),
  uid: z.string().optional(),
  resourceVersion: z.string().optional(),
  generation: z.number().int().optional(),
  creationTimestamp: z.string().optional(),
  deletionTimestamp: z.string().optional(),
  labels: checkedMap(labelsProblem).optional(),
  annotations: checkedMap(annotationsProblem).optional(),
  finalizers: z.array(z.string()).optional(),
  ownerReferences: z.array(ownerReferenceSchema).optional(),
});
export type ObjectMeta = z.infer<typeof objectMetaSchema>;

/** A namespaced reference to another object; the namespace defaults to the referrer's. */
export const namespacedRef = z.strictObject({ name: objectName, namespace: namespaceName.optional() });
export const localRef = z.strictObject({ name: objectName });
export const secretKeyRef = z.strictObject({ name: objectName, key: z.string().min(1).default("api-key") });

/** Longer duration texts are refused before the patterns run: the non-zero one backtracks quadratically over a long run of digits. */
const MAX_DURATION_TEXT = 64;
const DURATION = /^(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+$|^0$/;
/**
 * A duration with a non-zero digit in it, so that a CRD refuses "0" and "0s" as the server does;
 * written without lookahead, as Kubernetes checks CRD patterns with RE2.
 */
const NONZERO_DURATION = /^(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))*(\d*[1-9]\d*(\.\d+)?|\d+\.\d*[1-9]\d*)(ns|us|µs|ms|s|m|h)(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))*$/;

/**
 * Go-syntax duration such as 30s or 1h30m, kept as text in the spec, from 1 ms to `maxMs`: every
 * duration arms a timer, which a zero fires at once and one past the longest a timer keeps overflows.
 */
export function boundedDurationText(maxMs: number, range: string) {
  const outOfRange = `must be a duration from 1ms to ${range}, such as 90s or 5m`;
  return z
    .string()
    .max(MAX_DURATION_TEXT, { message: outOfRange, abort: true })
    .regex(DURATION, { message: "must be a duration such as 30s, 5m or 1h30m", abort: true })
    .regex(NONZERO_DURATION, { message: outOfRange, abort: true })
    .refine((text) => {
      const ms = parseDuration(text);
      return ms >= 1 && ms <= maxMs;
    }, outOfRange);
}

/** Any duration a spec gives, up to the longest a Node timer can wait. */
export const durationText = boundedDurationText(MAX_DURATION_MS, `${formatDuration(MAX_DURATION_MS)} (the longest a timer can wait)`);

/** An http(s) URL; other schemes (javascript:, file:) are refused. */
export const httpURL = z.url({ protocol: /^https?$/, message: "must be an http(s) URL" });

/** Labels, annotations and finalizers Orka gives meaning to. */
export const LABEL = {
  parentTask: "orka.ai/parent-task",
  delegatedAgent: "orka.ai/delegated-agent",
  iteration: "orka.ai/iteration",
  iterationGroup: "orka.ai/iteration-group",
  scheduledRun: "orka.ai/scheduled-run",
  createdBy: "orka.ai/created-by",
  coordinator: "orka.ai/coordinator",
  transactionId: "orka.ai/transaction-id",
  authProfile: "orka.ai/auth-profile",
  /** A digest of the tool call's idempotency key that created this child (effect-ledger reconciliation). */
  effectKey: "orka.ai/effect-key",
} as const;

export const ANNOTATION = {
  parentTaskName: "orka.ai/parent-task-name",
  /** Set on a child created in another namespace than its parent's: where the parent lives. */
  parentTaskNamespace: "orka.ai/parent-task-namespace",
  coordinationDepth: "orka.ai/coordination-depth",
  disableCoordinationToolInjection: "orka.ai/disable-coordination-tool-injection",
  /** The human-readable name given to create_pr_monitor; the Task itself has a generated name. */
  prMonitorName: "orka.ai/pr-monitor-name",
  autoRetry: "orka.ai/auto-retry",
  maxRetries: "orka.ai/max-retries",
  retryCount: "orka.ai/retry-count",
  originalPrompt: "orka.ai/original-prompt",
  retriedFrom: "orka.ai/retried-from",
  transactionId: "orka.ai/transaction-id",
  transactionIssuer: "orka.ai/transaction-issuer",
  transactionSubject: "orka.ai/transaction-subject",
  transactionRequestingWorkload: "orka.ai/transaction-requesting-workload",
  transactionScope: "orka.ai/transaction-scope",
  transactionContextDigest: "orka.ai/transaction-context-digest",
  contextTokenProfile: "orka.ai/context-token-profile",
  requesterContextDigest: "orka.ai/requester-context-digest",
  transactionTokenSecret: "orka.ai/transaction-token-secret",
  /** `<task>/<uid>/<run>/<step>`: the journalled run and step a forked Task continues from. */
  forkedFrom: "orka.ai/forked-from",
} as const;

export const FINALIZER_CLEANUP = "orka.ai/cleanup";

/**
 * Any text as a valid label value (coordination conventions): itself when it is one, else a
 * normalized prefix, `-` and 12 hex of its SHA-256 — at most 63 characters either way.
 */
export function labelValue(text: string): string {
  if (text.length <= 63 && LABEL_TEXT.test(text)) return text;
  const hash = sha256Hex(text).slice(0, 12);
  const prefix = text.slice(0, 50).replace(/[^-A-Za-z0-9_.]+/g, "-").replace(/^[^A-Za-z0-9]+|[^A-Za-z0-9]+$/g, "");
  return prefix ? `${prefix}-${hash}` : hash;
}

/** The label selector of a Task's children (the parent link label, label-safe). */
export function childrenOf(parentName: string): string {
  return `${LABEL.parentTask}=${labelValue(parentName)}`;
}

/** Every object Orka stores, whatever its kind. */
export interface Resource<Spec = unknown, Status = unknown> {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta & { namespace: string };
  spec: Spec;
  status?: Status;
}
