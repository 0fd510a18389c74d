import { GrantRefused } from "../../auth/grants.ts";
import type { AgentSpec } from "../../resources/agent.ts";
import { ANNOTATION, childrenOf } from "../../resources/meta.ts";
import type { ProviderSpec } from "../../resources/provider.ts";
import { taskSpecSchema, type Task, type TaskSpec, type TaskStatus } from "../../resources/task.ts";
import { describeZodError, parseWith } from "../../resources/validate.ts";
import { validateWorkspace } from "../../resources/workspace.ts";
import type { ResourceStore } from "../../store/resource-store.ts";
import { prMonitorArgs, REVIEW_EVENTS, type PrMonitorArgs, type ReviewEvent } from "../../tools/chat/pr-monitor-args.ts";
import { ToolRefusal, type ToolEnvelope } from "../../tools/envelope.ts";
import { OrkaError } from "../../util/errors.ts";
import { checkChildGrant, type ChildGrants } from "../child-transaction.ts";
import { createChild, draftChild } from "../children.ts";
import { parentNamespaceOf } from "../../resources/parent-link.ts";
import { checkNamespaceForTask } from "../task-identity.ts";
import { chooseForgeSecret, chooseReadSecret } from "./credentials.ts";
import { monitorPrompt } from "./prompt.ts";
import { monitorRepoURL } from "./repo-url.ts";

/** The monitor Task's whole tool selection: scoped to its repository, nothing to act elsewhere. */
export const MONITOR_TOOLS = ["list_pull_requests", "check_pr_review_marker", "check_pull_request_ci", "review_pull_request", "post_review_comment"] as const;

/** How many PR monitors one Task may hold: a model looping on the tool cannot fill the namespace with schedules. */
export const MAX_PR_MONITORS_PER_TASK = 5;

const OPERATION = "createPrMonitor";
export const NO_FORGE_WARNING = "reviews cannot be posted: no forge credential";

export interface PrMonitorCreated {
  name: string;
  monitor_name: string;
  namespace: string;
  schedule: string;
  message: "PR monitor task created";
  warning?: string;
}

/**
 * create_pr_monitor on the control plane: every check in order, each refusal answered as a result the
 * model can act on, and nothing created unless all pass. The caller's right to create Tasks in the target
 * namespace (and its transaction grant) is settled before any Secret is looked up, so a caller cannot
 * learn which Secrets exist where it may not create a monitor.
 */
export async function createPrMonitor(store: ResourceStore, grants: ChildGrants, parent: Task, body: unknown): Promise<ToolEnvelope<PrMonitorCreated>> {
  try {
    return { success: true, data: await checkAndCreate(store, grants, parent, body) };
  } catch (err) {
    return refusalOf(err).envelope();
  }
}

async function checkAndCreate(store: ResourceStore, grants: ChildGrants, parent: Task, body: unknown): Promise<PrMonitorCreated> {
  await checkMonitorLimit(store, parent);
  const args = parseArguments(body);
  const namespace = args.namespace ?? parent.metadata.namespace;
  checkNamespaceForTask(parent, namespace, grants.isolation);
  const repoURL = monitorRepoURL(args.repo_url);
  await checkAgent(store, namespace, args.agent_ref);
  if (args.provider_ref) await checkProvider(store, namespace, args.provider_ref);
  const reviewEvent = reviewEventOf(args.review_event);

  const spec = monitorSpec(parent, args, repoURL, reviewEvent);
  const annotations = { [ANNOTATION.prMonitorName]: args.name, [ANNOTATION.disableCoordinationToolInjection]: "true" };
  const draft = draftChild(parent, namespace, spec, { labels: {}, annotations });
  await checkChildGrant(store, grants, parent, draft, OPERATION);

  const read = await chooseReadSecret(store, namespace, args.gitSecretRef);
  const forge = args.forgeSecretRef ? await chooseForgeSecret(store, namespace, args.forgeSecretRef, read) : undefined;
  const workspace = validateWorkspace({
    gitRepo: repoURL,
    readCredentialRef: read.name,
    ...(read.key ? { readCredentialKey: read.key } : {}),
    ...(forge ? { forgeCredentialRef: forge.name, ...(forge.key ? { forgeCredentialKey: forge.key } : {}) } : {}),
  });
  const created = await createChild(store, grants, parent, { ...draft, spec: { ...spec, workspace } }, OPERATION);
  return {
    name: created.metadata.name,
    monitor_name: args.name,
    namespace,
    schedule: args.schedule,
    message: "PR monitor task created",
    ...(forge ? {} : { warning: NO_FORGE_WARNING }),
  };
}

function monitorSpec(parent: Task, args: PrMonitorArgs, repoURL: string, reviewEvent: ReviewEvent): TaskSpec {
  return parseWith(
    taskSpecSchema,
    {
      type: "ai",
      schedule: args.schedule,
      agentRef: { name: args.agent_ref },
      ai: {
        ...(args.provider_ref ? { providerRef: { name: args.provider_ref } } : {}),
        prompt: monitorPrompt({ repoURL, perPage: args.per_page, reviewEvent, extra: args.prompt, validates: args.validation !== undefined }),
        tools: [...MONITOR_TOOLS],
      },
      env: [{ name: "ORKA_GIT_REPO", value: repoURL }],
      // Checked here too, so the grant sees the repository before any Secret is looked up.
      workspace: { gitRepo: repoURL },
      ...(args.validation ? { validation: args.validation } : {}),
      requestedBy: parent.spec.requestedBy,
    },
    "spec",
  );
}

async function checkMonitorLimit(store: ResourceStore, parent: Task): Promise<void> {
  const children = await store.list<TaskSpec, TaskStatus>("Task", { labelSelector: childrenOf(parent.metadata.name) });
  const monitors = children.items.filter((child) => child.metadata.annotations?.[ANNOTATION.prMonitorName] !== undefined && parentNamespaceOf(child) === parent.metadata.namespace);
  if (monitors.length >= MAX_PR_MONITORS_PER_TASK) {
    throw new ToolRefusal(
      "limit_reached",
      `task creation limit reached (max ${MAX_PR_MONITORS_PER_TASK} PR monitors per task)`,
      `this task already created ${monitors.length} PR monitors (${monitors.map((m) => m.metadata.name).join(", ")}); reuse one of them`,
    );
  }
}

function parseArguments(body: unknown): PrMonitorArgs {
  const parsed = prMonitorArgs.strict().safeParse(body ?? {});
  if (parsed.success) return parsed.data;
  throw new ToolRefusal("invalid_arguments", `invalid arguments: ${describeZodError(parsed.error).message}`, "fix the arguments and call create_pr_monitor again");
}

/** The Agent must exist and run AI Tasks with coordination on and autonomy off, as the monitor's prompt expects. */
async function checkAgent(store: ResourceStore, namespace: string, name: string): Promise<void> {
  const agent = await store.get<AgentSpec, unknown>("Agent", namespace, name);
  const refuse = (errorType: "not_found" | "invalid_arguments", problem: string, suggestion: string) => {
    throw new ToolRefusal(errorType, problem, suggestion);
  };
  const choose = "name with agent_ref an AI Agent that has coordination enabled and autonomous coordination disabled";
  if (!agent) return refuse("not_found", `agent "${name}" not found in namespace "${namespace}"`, `create the Agent first, or ${choose}`);
  if (!agent.spec.coordination?.enabled) refuse("invalid_arguments", `agent "${name}" does not have coordination enabled, which a PR monitor needs`, choose);
  if (agent.spec.runtime) refuse("invalid_arguments", `agent "${name}" has a coding-agent runtime (spec.runtime); a PR monitor runs as an AI Task`, choose);
  if (agent.spec.coordination?.autonomous) refuse("invalid_arguments", `agent "${name}" has autonomous coordination enabled; a PR monitor needs it disabled`, choose);
}

async function checkProvider(store: ResourceStore, namespace: string, name: string): Promise<void> {
  if (await store.get<ProviderSpec, unknown>("Provider", namespace, name)) return;
  throw new ToolRefusal("not_found", `provider "${name}" not found in namespace "${namespace}"`, "name an existing Provider with provider_ref, or leave it out to use the Agent's");
}

function reviewEventOf(value: string | undefined): ReviewEvent {
  const event = (value ?? "").trim().toUpperCase() || "COMMENT";
  if ((REVIEW_EVENTS as readonly string[]).includes(event)) return event as ReviewEvent;
  throw new ToolRefusal("invalid_arguments", `review_event must be COMMENT, APPROVE or REQUEST_CHANGES, not "${(value ?? "").slice(0, 40)}"`, "call create_pr_monitor again with one of those, or leave review_event out for COMMENT");
}

/** Anything the checks refused becomes the envelope the model reads; a fault of Orka itself stays an error. */
function refusalOf(err: unknown): ToolRefusal {
  if (err instanceof ToolRefusal) return err;
  if (err instanceof GrantRefused) return new ToolRefusal("authorization_failed", err.message, "this task's transaction grant does not cover that monitor; ask for a wider grant");
  if (err instanceof OrkaError && err.code === "permission_denied") {
    return new ToolRefusal("permission_denied", err.message, "create the monitor in this task's own namespace, or leave namespace out");
  }
  if (err instanceof OrkaError && err.code === "invalid_argument") return new ToolRefusal("invalid_arguments", err.message, "fix the arguments and call create_pr_monitor again");
  throw err;
}
