import { randomBytes } from "node:crypto";
import { sha256Hex } from "../util/hash.ts";
import type { AgentSpec } from "../resources/agent.ts";
import { ANNOTATION, API_VERSION, LABEL, childrenOf, labelValue } from "../resources/meta.ts";
import { DEFAULT_PRIORITY, isTerminalPhase, taskSpecSchema, type Task, type TaskSpec, type TaskStatus } from "../resources/task.ts";
import { parseWith } from "../resources/validate.ts";
import type { TaskDataStore } from "../store/data-store.ts";
import type { ResourceStore } from "../store/resource-store.ts";
import type { ContainerArgs, DelegateArgs } from "../tools/coordination/schemas.ts";
import { isDuration, parseDuration } from "../util/duration.ts";
import { OrkaError } from "../util/errors.ts";
import { childRefusal, type ChildRefusal } from "./child-rules.ts";
import { parentLink, parentNamespaceOf, parentTaskName } from "../resources/parent-link.ts";
import { validateWorkspace } from "../resources/workspace.ts";
import { checkRepositoryHosts } from "../workspace/hosts.ts";
import { stampTransaction } from "../auth/provenance.ts";
import { createChildUnderGrant, type ChildGrants } from "./child-transaction.ts";
import { checkNamespaceForTask } from "./task-identity.ts";

const fail = (message: string) => new OrkaError("invalid_argument", message);
const RESULT_LIMIT = 4096;

function childName(parent: string): string {
  return `${parent.slice(0, 200)}-child-${randomBytes(3).toString("hex").slice(0, 5)}`;
}

/** A child of `parent` by name: in the parent's namespace, else one delegated to another namespace. */
export async function findChild(store: ResourceStore, parent: Task, name: string): Promise<Task | undefined> {
  const local = await store.get<TaskSpec, TaskStatus>("Task", parent.metadata.namespace, name);
  if (local) return local;
  const elsewhere = await store.list<TaskSpec, TaskStatus>("Task", { labelSelector: childrenOf(parent.metadata.name) });
  return elsewhere.items.find((child) => child.metadata.name === name && parentNamespaceOf(child) === parent.metadata.namespace);
}

function checkTimeout(timeout: string | undefined): string | undefined {
  if (timeout === undefined || timeout === "") return undefined;
  if (!isDuration(timeout)) throw fail(`invalid timeout "${timeout}": use a duration such as 20m`);
  return parseDuration(timeout) > 0 ? timeout : undefined;
}

function checkPriority(priority: number | undefined, parent: Task): number {
  if (priority === undefined) return parent.spec.priority ?? DEFAULT_PRIORITY;
  if (priority < 0 || priority > 1000) throw fail("priority must be between 0 and 1000");
  return priority;
}

/** delegate_task on the control plane: every check before anything is created. */
export async function delegate(store: ResourceStore, grants: ChildGrants, parent: Task, args: DelegateArgs): Promise<{ taskName: string; status: "created" }> {
  if (!args.agent.trim()) throw fail("agent is required");
  if (!args.prompt.trim()) throw fail("prompt is required");
  const namespace = parent.metadata.namespace;
  // The legacy `namespace` sets both, unless agentNamespace is given too: then the child stays here.
  const taskNamespace = args.taskNamespace ?? (args.agentNamespace ? namespace : args.namespace) ?? namespace;
  const agentNamespace = args.agentNamespace ?? args.namespace ?? taskNamespace;
  for (const target of new Set([taskNamespace, agentNamespace])) checkNamespaceForTask(parent, target, grants.isolation);
  if (grants.isolation.enforce && agentNamespace !== taskNamespace) {
    throw new OrkaError("permission_denied", `cross-namespace references are not allowed: agent namespace "${agentNamespace}" for a task in "${taskNamespace}"`);
  }
  const parentAgent = parent.spec.agentRef ? await store.get<AgentSpec, unknown>("Agent", parent.spec.agentRef.namespace ?? namespace, parent.spec.agentRef.name) : undefined;
  const depth = Number(parent.metadata.annotations?.[ANNOTATION.coordinationDepth] ?? 0) || 0;
  const agent = await store.get<AgentSpec, unknown>("Agent", agentNamespace, args.agent);
  const refusal = childRefusal({ parentName: parent.metadata.name, parentAgent, depth: depth + 1, namespace: taskNamespace, agentRef: { name: args.agent, namespace: agentNamespace }, agent });
  if (refusal) throw fail(delegationRefused(refusal, depth, `${agentNamespace}/${args.agent}`));
  if (!agent) throw fail(`failed to get agent "${agentNamespace}/${args.agent}": not found`);
  const codingAgent = agent.spec.runtime !== undefined;
  if (!codingAgent && (args.maxTurns !== undefined || args.allowBash !== undefined)) {
    throw fail("maxTurns and allowBash are only supported for coding-agent children");
  }
  if (codingAgent && (args.prior_task || args.feedback)) throw fail("prior_task is not supported for coding-agent children; have the next agent read the published branch");

  const labels: Record<string, string> = { [LABEL.delegatedAgent]: labelValue(args.agent) };
  const annotations: Record<string, string> = { [ANNOTATION.coordinationDepth]: String(depth + 1) };
  let workspace = args.workspace && validateWorkspace(args.workspace);
  checkRepositoryHosts(workspace, grants.gitHosts);
  let priorTaskRef: TaskSpec["priorTaskRef"];
  const prior = args.prior_task ? await store.get<TaskSpec, TaskStatus>("Task", taskNamespace, args.prior_task) : undefined;
  if (args.prior_task) {
    if (!prior) throw fail(`prior task "${args.prior_task}" not found`);
    const iteration = Number(prior.metadata.labels?.[LABEL.iteration]);
    labels[LABEL.iteration] = String(Number.isInteger(iteration) && iteration > 0 ? iteration + 1 : 2);
    labels[LABEL.iterationGroup] = prior.metadata.labels?.[LABEL.iterationGroup] ?? prior.metadata.uid!;
    workspace ??= prior.spec.workspace;
    priorTaskRef = { name: prior.metadata.name };
  }
  if (args.auto_retry) Object.assign(annotations, retryAnnotations(prior, args));
  const prompt = args.feedback ? `FEEDBACK FROM REVIEW:\n${args.feedback}\n\nTASK:\n${args.prompt}` : args.prompt;
  const spec = parseWith(
    taskSpecSchema,
    {
      type: codingAgent ? "agent" : "ai",
      agentRef: { name: args.agent, ...(agentNamespace !== taskNamespace ? { namespace: agentNamespace } : {}) },
      ...(codingAgent ? { prompt, agentRuntime: { maxTurns: args.maxTurns, allowBash: args.allowBash } } : { ai: { prompt } }),
      workspace,
      priority: checkPriority(args.priority, parent),
      timeout: checkTimeout(args.timeout),
      priorTaskRef,
      requestedBy: parent.spec.requestedBy,
    },
    "spec",
  );
  const child = await createChild(store, grants, parent, draftChild(parent, taskNamespace, spec, { labels, annotations }), "delegateTask");
  if (prior) await labelFirstIteration(store, prior);
  return { taskName: child.metadata.name, status: "created" };
}

function delegationRefused(refusal: ChildRefusal, depth: number, agent: string): string {
  switch (refusal.rule) {
    case "coordination":
      return "this task's agent does not have coordination enabled";
    case "depth":
      return `coordination depth exceeded: current depth ${depth}, max depth ${refusal.maxDepth}`;
    case "agent":
      return `agent "${agent}" is not in the allowed agents list`;
  }
}

/**
 * The Task a loop started from learns it was iteration 1 of its group once a second iteration
 * exists (after the child, so a refused delegation changes nothing; a repeated call does it again).
 */
async function labelFirstIteration(store: ResourceStore, prior: Task): Promise<void> {
  for (let attempt = 0; attempt < 3; attempt++) {
    const current = await store.get<TaskSpec, TaskStatus>("Task", prior.metadata.namespace, prior.metadata.name);
    if (!current || current.metadata.labels?.[LABEL.iteration]) return;
    const labels = { ...current.metadata.labels, [LABEL.iteration]: "1", [LABEL.iterationGroup]: current.metadata.uid! };
    try {
      await store.update({ ...current, metadata: { ...current.metadata, labels } });
      return;
    } catch (err) {
      if (!(err instanceof OrkaError && err.code === "conflict")) throw err;
    }
  }
}

/**
 * auto_retry bookkeeping: a fresh budget, or, when re-delegating a failed auto-retry
 * Task of the same Agent as prior_task, the next retry of the same budget.
 */
function retryAnnotations(prior: Task | undefined, args: DelegateArgs): Record<string, string> {
  const fresh = {
    [ANNOTATION.autoRetry]: "true",
    [ANNOTATION.maxRetries]: String(args.max_retries !== undefined && args.max_retries >= 0 ? args.max_retries : 2),
    [ANNOTATION.retryCount]: "0",
    [ANNOTATION.originalPrompt]: args.prompt.slice(0, 32 * 1024),
  };
  const annotations = prior?.metadata.annotations ?? {};
  if (!prior || annotations[ANNOTATION.autoRetry] !== "true" || prior.status?.phase !== "Failed" || prior.spec.agentRef?.name !== args.agent) return fresh;
  const count = Number(annotations[ANNOTATION.retryCount] ?? 0) || 0;
  const max = Number(annotations[ANNOTATION.maxRetries] ?? 2) || 0;
  if (count >= max) throw fail(`retry budget exhausted for ${prior.metadata.name} (${count}/${max})`);
  return {
    ...fresh,
    [ANNOTATION.maxRetries]: String(max),
    [ANNOTATION.retryCount]: String(count + 1),
    [ANNOTATION.originalPrompt]: annotations[ANNOTATION.originalPrompt] ?? fresh[ANNOTATION.originalPrompt],
    [ANNOTATION.retriedFrom]: prior.metadata.name,
  };
}

/** create_container_task: chat-style results, never a thrown validation error. */
export async function createContainerChild(store: ResourceStore, grants: ChildGrants, parent: Task, args: ContainerArgs) {
  const namespace = args.namespace ?? parent.metadata.namespace;
  try {
    checkNamespaceForTask(parent, namespace, grants.isolation);
    const prior = args.prior_task ? await store.get<TaskSpec, TaskStatus>("Task", namespace, args.prior_task) : undefined;
    if (args.prior_task && !prior) throw fail(`prior task "${args.prior_task}" not found`);
    const workspace = args.workspace ? validateWorkspace(args.workspace) : prior?.spec.workspace;
    checkRepositoryHosts(workspace, grants.gitHosts);
    const spec = parseWith(
      taskSpecSchema,
      {
        type: "container",
        image: args.image,
        command: args.command,
        args: args.args,
        workspace,
        timeout: checkTimeout(args.timeout),
        priority: checkPriority(args.priority, parent),
        schedule: args.schedule,
        requestedBy: parent.spec.requestedBy,
      },
      "spec",
    );
    const child = await createChild(store, grants, parent, draftChild(parent, namespace, spec, { labels: {}, annotations: {} }), "createContainerTask");
    const message = args.schedule ? `Recurring task scheduled (schedule: ${args.schedule})` : "Task created";
    return { success: true, data: { name: child.metadata.name, namespace, phase: "Pending", message } };
  } catch (err) {
    const error = err instanceof Error ? err.message : String(err);
    if (err instanceof OrkaError && err.code === "permission_denied") {
      return { success: false, error, errorType: "authorization_failed", suggestion: "this task's grant does not allow that child; ask for a wider grant" };
    }
    return { success: false, error, errorType: "invalid_arguments", suggestion: "fix the arguments and call create_container_task again" };
  }
}

/** A child Task of `parent` in `namespace` as a tool drafts it: a generated name and the parent link, not yet stored. */
export function draftChild(parent: Task, namespace: string, spec: TaskSpec, extra: { labels: Record<string, string>; annotations: Record<string, string> }): Task {
  return {
    apiVersion: API_VERSION,
    kind: "Task",
    metadata: { name: childName(parent.metadata.name), namespace, ...parentLink(parent, namespace, { labels: { [LABEL.coordinator]: "true", ...extra.labels }, annotations: extra.annotations }) },
    spec,
  };
}

/** Stores a drafted child under the parent's grant; a repeat of the same tool call finds the child it created. */
export async function createChild(store: ResourceStore, grants: ChildGrants, parent: Task, child: Task, operation: string): Promise<Task> {
  // A call repeated after the control plane died mid-call finds the child it already created.
  const keyLabel = grants.effectKey && sha256Hex(grants.effectKey).slice(0, 40);
  if (keyLabel) {
    const existing = await store.list<TaskSpec, TaskStatus>("Task", { namespace: child.metadata.namespace, labelSelector: `${LABEL.effectKey}=${keyLabel}` });
    if (existing.items[0]) return existing.items[0];
    child.metadata.labels = { ...child.metadata.labels, [LABEL.effectKey]: keyLabel };
  }
  if (parent.spec.transaction) stampTransaction(child.spec, child.metadata, parent.spec.transaction);
  try {
    return await createChildUnderGrant(store, grants, parent, child, operation);
  } catch (err) {
    // Grant refusals and an unreachable token service keep their own status and message.
    if (err instanceof OrkaError && (err.code === "permission_denied" || err.code === "unavailable")) throw err;
    throw fail(`failed to create child task: ${err instanceof Error ? err.message : String(err)}`);
  }
}

export interface WaitResult {
  task: string;
  phase: string;
  agent?: string;
  result?: string;
  failureDetails?: { message: string; retryCount: number; maxRetries: number };
  /** Every other field of a structured result (summary, verdict, feedback, baseSHA, files, data, ...). */
  [field: string]: unknown;
}

const DATA_LIMIT_BYTES = 32 * 1024;

/**
 * A child's stored result as its coordinator may see it: a structured result (a JSON object) loses
 * only its `diff`, which would flood the coordinator's context; anything else is plain text.
 */
export function resultWithoutDiff(stored: string): { text: string; fields?: Record<string, unknown> } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(stored);
  } catch {
    return { text: stored };
  }
  if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) return { text: stored };
  const { diff, ...fields } = parsed as Record<string, unknown>;
  return { text: diff === undefined ? stored : JSON.stringify(fields), fields };
}

/** One entry of wait_for_tasks: results from the store, `diff` stripped, summaries and data capped. */
export function describeChild(data: TaskDataStore, parent: Task, name: string, child: Task | undefined): WaitResult {
  if (!child) return { task: name, phase: "Error", result: `error: task "${name}" not found` };
  if (parentTaskName(child) !== parent.metadata.name || parentNamespaceOf(child) !== parent.metadata.namespace) return { task: name, phase: "Error", result: `error: task "${name}" is not a child of the current task` };
  const phase = child.status?.phase ?? "Pending";
  let entry: WaitResult = { task: name, phase, ...(child.spec.agentRef ? { agent: child.spec.agentRef.name } : {}) };
  if (isTerminalPhase(phase)) {
    const stored = data.getResult(child.metadata.namespace, name);
    if (stored === undefined) entry.result = phase === "Failed" ? `error: ${child.status?.message ?? "failed"}` : child.status?.message;
    else entry = { ...resultEntry(stored), ...entry };
    if (phase === "Failed" && child.metadata.annotations?.[ANNOTATION.autoRetry] === "true") {
      entry.failureDetails = {
        message: child.status?.message ?? "",
        retryCount: Number(child.metadata.annotations[ANNOTATION.retryCount] ?? 0),
        maxRetries: Number(child.metadata.annotations[ANNOTATION.maxRetries] ?? 2),
      };
    }
  }
  return entry;
}

/**
 * What a coordinator reads of a stored result: a structured result's fields without `diff`, an
 * oversized `data` replaced by a note, and its summary as `result`; plain text is the summary.
 */
function resultEntry(stored: string): Record<string, unknown> {
  const { fields } = resultWithoutDiff(stored);
  if (!fields) return { result: capSummary(stored) };
  const dataBytes = fields.data === undefined ? 0 : Buffer.byteLength(JSON.stringify(fields.data));
  if (dataBytes > DATA_LIMIT_BYTES) {
    fields.data = { truncated: true, originalBytes: dataBytes, message: "structured data payload exceeded wait_for_tasks inline limit; use artifact references for large outputs" };
  }
  return { ...fields, ...(typeof fields.summary === "string" ? { result: capSummary(fields.summary) } : {}) };
}

function capSummary(summary: string): string {
  return summary.length > RESULT_LIMIT ? `${summary.slice(0, RESULT_LIMIT)}\n[summary truncated, full summary: ${summary.length} chars]` : summary;
}

/**
 * Waits until every named child is terminal, or `maxWaitMs` passes; wakes on store changes, not a poll.
 * It watches before it first reads: a child that ends while a read runs wakes another read.
 */
export function waitForChildren(store: ResourceStore, data: TaskDataStore, parent: Task, names: string[], maxWaitMs: number): Promise<{ completed: boolean; results: WaitResult[] }> {
  const read = async () => {
    const results: WaitResult[] = [];
    for (const name of names) results.push(describeChild(data, parent, name, await findChild(store, parent, name)));
    const completed = results.every((r) => r.phase === "Error" || isTerminalPhase(r.phase));
    return { completed, results };
  };
  if (maxWaitMs <= 0) return read();
  const wanted = new Set(names);
  return new Promise((resolve, reject) => {
    let done = false;
    const unwatch = store.watch((event) => {
      if (event.object.kind === "Task" && wanted.has(event.object.metadata.name)) void check(false);
    });
    const timer = setTimeout(() => void check(true), maxWaitMs);
    // A fallback poll, should a change notification ever be missed.
    const poll = setInterval(() => void check(false), 5000);
    void check(false);
    async function check(last: boolean) {
      try {
        const state = await read();
        if (!done && (state.completed || last)) settle(() => resolve(state));
      } catch (err) {
        if (!done) settle(() => reject(err));
      }
    }
    function settle(answer: () => void) {
      done = true;
      clearTimeout(timer);
      clearInterval(poll);
      unwatch();
      answer();
    }
  });
}
