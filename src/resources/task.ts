import { Cron } from "croner";
import { z } from "zod";
import { durationText, httpURL, localRef, namespacedRef, type Resource } from "./meta.ts";
import { validationSchema } from "./validation.ts";
import { allowedToolNames, MAX_TURNS_LIMIT } from "./agent.ts";

export const TASK_TYPES = ["ai", "agent", "container"] as const;
export type TaskType = (typeof TASK_TYPES)[number];

export const TASK_PHASES = ["Pending", "Running", "Finalizing", "Succeeded", "Failed", "Scheduled", "Cancelled"] as const;
export type TaskPhase = (typeof TASK_PHASES)[number];
export const TERMINAL_PHASES: readonly string[] = ["Succeeded", "Failed", "Cancelled"] satisfies TaskPhase[];

/** Whether a phase is one a Task never leaves: Succeeded, Failed or Cancelled. No phase yet is Pending. */
export function isTerminalPhase(phase: string | undefined): boolean {
  return TERMINAL_PHASES.includes(phase ?? "Pending");
}

export function isTerminal(task: { status?: { phase?: string } }): boolean {
  return isTerminalPhase(task.status?.phase);
}

/** The priority of a Task that sets none. */
export const DEFAULT_PRIORITY = 500;

/** What a `sessionRef` means for a field it leaves out. */
export const SESSION_REF_DEFAULTS = { create: false, append: true, maxMessages: 50 } as const;

/** What a `retryPolicy` means for a field it leaves out. */
export const RETRY_POLICY_DEFAULTS = { maxRetries: 0, backoffMultiplier: 2 } as const;

/** Types only: the rules between fields (intent, credentials, PR text) live in workspace.ts. */
export const workspaceSchema = z.strictObject({
  intent: z.string().optional(),
  gitRepo: z.string().optional(),
  branch: z.string().optional(),
  ref: z.string().optional(),
  readCredentialRef: z.string().optional(),
  /** The key of readCredentialRef's Secret that holds the token, when it is not `token`. */
  readCredentialKey: z.string().optional(),
  publicationGitRepo: z.string().optional(),
  publicationReadCredentialRef: z.string().optional(),
  publicationCredentialRef: z.string().optional(),
  forgeCredentialRef: z.string().optional(),
  /** The key of forgeCredentialRef's Secret that holds the token, when it is not `token`. */
  forgeCredentialKey: z.string().optional(),
  pushBranch: z.string().optional(),
  prBaseBranch: z.string().optional(),
  prTitle: z.string().optional(),
  prBody: z.string().optional(),
  createPR: z.boolean().optional(),
});
export type Workspace = z.infer<typeof workspaceSchema>;

export const requestedBySchema = z.strictObject({
  subject: z.string().optional(),
  issuer: z.string().optional(),
  username: z.string(),
  email: z.string().optional(),
  groups: z.array(z.string()).optional(),
  roles: z.array(z.string()).optional(),
});

export const transactionSchema = z.strictObject({
  profile: z.literal("transaction-token"),
  id: z.string(),
  issuer: z.string(),
  audience: z.string(),
  subject: z.string(),
  requestingWorkload: z.string(),
  scope: z.string(),
  scopes: z.array(z.string()),
  contextDigest: z.string(),
  requesterContextDigest: z.string().optional(),
  context: z.record(z.string(), z.string()),
});

/** Spec fields the server stamps at creation; a client never sets them. */
export const SERVER_STAMPED_TASK_FIELDS = ["requestedBy", "transaction"] as const;

function isCronExpression(text: string): boolean {
  try {
    new Cron(text, { paused: true });
    return true;
  } catch {
    return false;
  }
}

/** What croner and Intl accept as `timezone`, checked with the same Intl. */
function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/** A cron schedule (minute hour day-of-month month day-of-week), as croner reads it. */
export const cronSchedule = z.string().refine(isCronExpression, "must be a cron expression such as \"0 9 * * 1-5\" (minute hour day-of-month month day-of-week)");

export const taskSpecSchema = z.strictObject({
  type: z.enum(TASK_TYPES, { message: 'must be one of "ai", "agent" or "container"' }),
  agentRef: namespacedRef.optional(),
  prompt: z.string().optional(),
  ai: z
    .strictObject({
      providerRef: namespacedRef.optional(),
      provider: z.string().optional(),
      model: z.string().optional(),
      prompt: z.string().optional(),
      systemPrompt: z.string().optional(),
      temperature: z.number().min(0).max(2).optional(),
      maxTokens: z.number().int().positive().optional(),
      skills: z.array(localRef).optional(),
      tools: z.array(z.string().min(1)).optional(),
    })
    .optional(),
  image: z.string().optional(),
  command: z.array(z.string()).optional(),
  args: z.array(z.string()).optional(),
  env: z.array(z.strictObject({ name: z.string().min(1), value: z.string().default("") })).optional(),
  timeout: durationText.optional(),
  priority: z.number().int().min(0).max(1000).default(DEFAULT_PRIORITY),
  retryPolicy: z
    .strictObject({
      maxRetries: z.number().int().min(0).max(100).default(RETRY_POLICY_DEFAULTS.maxRetries),
      backoffMultiplier: z.number().min(1).default(RETRY_POLICY_DEFAULTS.backoffMultiplier),
      initialDelay: durationText.optional(),
    })
    .optional(),
  schedule: cronSchedule.optional(),
  timeZone: z.string().refine(isTimeZone, "must be an IANA time zone such as UTC or Europe/Berlin").optional(),
  concurrencyPolicy: z.enum(["Forbid", "Allow"]).optional(),
  startingDeadlineSeconds: z.number().int().positive().optional(),
  successfulJobsHistoryLimit: z.number().int().min(0).optional(),
  failedJobsHistoryLimit: z.number().int().min(0).optional(),
  suspend: z.boolean().optional(),
  sessionRef: z
    .strictObject({
      name: z.string().min(1),
      create: z.boolean().default(SESSION_REF_DEFAULTS.create),
      append: z.boolean().default(SESSION_REF_DEFAULTS.append),
      maxMessages: z.number().int().positive().default(SESSION_REF_DEFAULTS.maxMessages),
    })
    .optional(),
  workspace: workspaceSchema.optional(),
  /** A PR monitor's commands for run_validation. */
  validation: validationSchema.optional(),
  agentRuntime: z
    .strictObject({
      maxTurns: z.number().int().min(1).max(MAX_TURNS_LIMIT).optional(),
      /** Present, even empty (deny all), it replaces the Agent's runtime.defaultAllowedTools. */
      allowedTools: allowedToolNames.optional(),
      disallowedTools: allowedToolNames.optional(),
      allowBash: z.boolean().optional(),
    })
    .optional(),
  priorTaskRef: localRef.optional(),
  secretRef: localRef.optional(),
  webhookURL: httpURL.optional(),
  /** Stamped by the server from the caller's identity; clients may not set it. */
  requestedBy: requestedBySchema.optional(),
  /** Stamped by the server from a verified transaction token; clients may not set it. */
  transaction: transactionSchema.optional(),
})
  .refine((spec) => spec.type !== "container" || (spec.command?.length ?? 0) > 0 || !!spec.image, {
    message: "container tasks need a command (or an image, with a container runtime)",
    path: ["command"],
  })
  .refine((spec) => spec.type !== "agent" || !spec.priorTaskRef, {
    message: "built-in coding-agent runtimes do not accept a prior Task: remove priorTaskRef and have the agent read the published branch instead",
    path: ["priorTaskRef"],
  })
  .refine((spec) => spec.type !== "ai" || !!(spec.prompt ?? spec.ai?.prompt), {
    message: "ai tasks need a prompt (spec.prompt or spec.ai.prompt)",
    path: ["prompt"],
  });
export type TaskSpec = z.infer<typeof taskSpecSchema>;
export type Task = Resource<TaskSpec, TaskStatus>;

export const taskConditionSchema = z.object({
  type: z.string(),
  status: z.enum(["True", "False", "Unknown"]),
  reason: z.string().optional(),
  message: z.string().optional(),
  lastTransitionTime: z.string().optional(),
});
export type TaskCondition = z.infer<typeof taskConditionSchema>;

export const childTaskSummarySchema = z.object({
  name: z.string(),
  agent: z.string().optional(),
  phase: z.string(),
  result: z.string().optional(),
});

/** Delivery states while publication runs, and the terminal outcomes (`outcome` is set once terminal). */
export const DELIVERY_STATES = ["Validating", "Preparing", "Prepared", "Publishing", "Verifying"] as const;
export const DELIVERY_OUTCOMES = [
  "NotRequested", "VerifiedExact", "DeliveredSuperseded", "ReadValidated", "NoChange", "CancelledBeforePublish",
  "ReadOnlyWorkspaceModified", "DeliveryConflict", "CredentialBlocked", "PublicationOutcomeUnknown",
] as const;
export type DeliveryOutcome = (typeof DELIVERY_OUTCOMES)[number];

/** The pull request the publisher opened (or found) for a verified publication. */
export const prReceiptSchema = z.object({
  number: z.number().int(),
  url: z.string(),
  state: z.string(),
  headSHA: z.string(),
  /** Whether the publisher created it or found it already open for the branch. */
  status: z.enum(["created", "existing"]).optional(),
});

/**
 * What Orka's publisher observed, not what a model claimed: the branch it pushed, the commit it
 * expected there, and the commit it read back with the publication read credential.
 */
export const deliverySchema = z.object({
  state: z.enum([...DELIVERY_STATES, ...DELIVERY_OUTCOMES]),
  outcome: z.enum(DELIVERY_OUTCOMES).optional(),
  reason: z.string().optional(),
  publicationID: z.string().optional(),
  publicationRepository: z.string().optional(),
  branch: z.string().optional(),
  remoteBeforeSHA: z.string().optional(),
  expectedCommitSHA: z.string().optional(),
  verifiedRemoteSHA: z.string().optional(),
  /** sha256 of the published diff. */
  artifactDigest: z.string().optional(),
  verifiedAt: z.string().optional(),
  prReceipt: prReceiptSchema.optional(),
  message: z.string().optional(),
});
export type Delivery = z.infer<typeof deliverySchema>;

/** The checkout a Task's attempts share: the ref is resolved once (the default branch included) and frozen here. */
export const workspaceStatusSchema = z.object({
  repository: z.string(),
  /** The branch checked out, when the Task named one or had the default branch resolved. */
  branch: z.string().optional(),
  /** The ref the Task named (`workspace.ref`), when it named one. */
  ref: z.string().optional(),
  baseSHA: z.string(),
  resolvedAt: z.string().optional(),
});
export type WorkspaceStatus = z.infer<typeof workspaceStatusSchema>;

export const taskStatusSchema = z.object({
  phase: z.enum(TASK_PHASES).optional(),
  startTime: z.string().optional(),
  completionTime: z.string().optional(),
  attempts: z.number().int().optional(),
  iteration: z.number().int().optional(),
  jobName: z.string().optional(),
  resultRef: z.object({ available: z.boolean() }).optional(),
  message: z.string().optional(),
  childTasks: z.array(childTaskSummarySchema).optional(),
  conditions: z.array(taskConditionSchema).optional(),
  lastScheduleTime: z.string().optional(),
  nextScheduleTime: z.string().optional(),
  webhookDelivered: z.boolean().optional(),
  executionOutcome: z.object({ phase: z.enum(TASK_PHASES), message: z.string().optional() }).optional(),
  /** When the Task may be started again after a failed attempt (retry backoff). */
  retryAfter: z.string().optional(),
  /** The journal run the current attempt writes (its first attempt's number). */
  journalRun: z.number().int().optional(),
  /** Set while a lost attempt waits to be resumed: the next attempt continues `journalRun`. */
  resuming: z.boolean().optional(),
  /** How many times the current run was resumed after a lost worker. */
  resumes: z.number().int().optional(),
  /** When the Task entered the queue; drives ageing. */
  queuedAt: z.string().optional(),
  workspace: workspaceStatusSchema.optional(),
  delivery: deliverySchema.optional(),
});
export type TaskStatus = z.infer<typeof taskStatusSchema>;
