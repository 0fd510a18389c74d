import { COORDINATION_DEFAULTS } from "../resources/agent.ts";
import type { ChatMessage, ModelCallSettings, ToolDefinition } from "../providers/model.ts";
import type { ModelEndpoint } from "../providers/index.ts";
import type { ToolSettings } from "../tools/define.ts";
import type { RuntimeType } from "../resources/agent.ts";
import type { SessionPolicy } from "../runtimes/adapter.ts";
import type { Approval } from "../store/approval-store.ts";
import type { MemoryContextEntry } from "../memory/context.ts";
import { OrkaError, type ErrorCode } from "../util/errors.ts";

/**
 * Everything one attempt needs, resolved by the controller. It travels as the `ORKA_*` environment
 * (the same for a local worker process and a Kubernetes Job), so it is built and read here only.
 */
export interface AttemptConfig {
  attemptId: string;
  attempt: number;
  /** The journal run this attempt writes; `resume` when it continues a lost attempt's run. */
  journal: { run: number; resume: boolean };
  task: { name: string; namespace: string; uid: string; type: "ai" | "agent" | "container" };
  agentName?: string;
  parentTask?: string;
  controllerURL: string;
  token: string;
  workspaceDir: string;
  artifactsDir: string;
  tmpDir: string;
  /** The Task's own transaction token, in a file only this attempt can read; absent without one. */
  transactionTokenFile?: string;
  toolSettings: ToolSettings;
  /** The Task's session (`spec.sessionRef`): its history is replayed and, with `append`, extended. */
  session?: { name: string; append: boolean; maxMessages: number };
  /**
   * `memories`: the namespace's newest reviewed memories for the system prompt, read by the
   * controller (none when the attempt resumes from its journal or has no `recall_memory`).
   */
  ai?: AiRun & { modelCalls: ModelCallSettings; memories: MemoryContextEntry[] };
  coordination: { enabled: boolean; maxDepth: number; maxChildren: number; allowedAgents: string[]; depth: number };
  autonomous: { mode: boolean; iteration: number; maxIterations: number };
  approvalRequiredTools: string[];
  /** Human decisions on this Task's approval requests, newest first (at most 32). */
  resolvedApprovals?: Approval[];
  container?: ContainerRun;
  /** A coding-agent session (`type: agent`). */
  agent?: AgentRun;
}

/**
 * The Secret values an attempt carries (its model keys and the search key). The worker scrubs them
 * from what its own tools answer before the model sees it; the controller adds the custom Tools'
 * credentials, which stay on the server, to scrub everything the attempt sends back.
 */
export function carriedSecretValues(config: AttemptConfig): string[] {
  const values = [config.ai?.endpoint.apiKey, ...(config.ai?.fallbacks ?? []).map((f) => f.apiKey), config.agent?.endpoint.apiKey, config.toolSettings.search.apiKey];
  return values.filter((value): value is string => !!value);
}

/** What the model loop of one attempt needs, as the controller resolved it. */
export interface AiRun {
  endpoint: ModelEndpoint;
  fallbacks: ModelEndpoint[];
  prompt: string;
  systemPrompt: string;
  /** The Agent's persona text, if it has one. */
  soul?: string;
  skills: string[];
  tools: string[];
  customTools: ToolDefinition[];
  temperature?: number;
  maxTokens?: number;
  turnBudget: number;
}

/** One coding-agent session: a CLI run in a private root, its model calls through a proxy, Orka's tools through a broker. */
export interface AgentRun {
  runtime: RuntimeType;
  /** The operator's replacement for the CLI's command; absent: the pinned CLI of the runtime, from this cache. */
  command?: string[];
  /** Where pinned CLIs are installed on first use (`ORKA_RUNTIME_CACHE`). */
  cliCacheDir: string;
  /** Host paths the CLI's sandbox shows it read-only besides the system, Node and its command (`ORKA_RUNTIME_READ_PATHS`). */
  readPaths: string[];
  /** The Provider the session's proxy forwards to, with its key (never given to the CLI); its model is the pinned one. */
  endpoint: ModelEndpoint;
  prompt: string;
  policy: SessionPolicy;
  /** The Orka tools the broker lists and runs. */
  brokered: BrokeredTool[];
}

/** An Orka tool offered to a coding CLI through the session's MCP broker. */
export interface BrokeredTool {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
  /** A consequential call is reserved in the effect ledger before it runs, so a repeated call id replays it. */
  effect: "read_only" | "consequential";
  /** A custom Tool's digest of its uid, generation and spec when the session started: a call after it changed is refused. */
  digest?: string;
}

/** A sandboxed command: `command` + `args`, the user's env, and whether it may use the network. */
export interface ContainerRun {
  command: string[];
  env: Record<string, string>;
  network: boolean;
}

const json = (value: unknown) => JSON.stringify(value);
const optional = (value: number | undefined) => (value === undefined ? "" : String(value));
const csv = (values: string[]) => values.join(",");
const splitCsv = (text: string | undefined) => (text ? text.split(",").filter(Boolean) : []);

export function attemptEnv(config: AttemptConfig): Record<string, string> {
  const env: Record<string, string> = {
    ...baseEnv(config),
    ORKA_ATTEMPT_KIND: "task",
    ORKA_TASK_NAME: config.task.name,
    ORKA_TASK_NAMESPACE: config.task.namespace,
    ORKA_TASK_UID: config.task.uid,
    ORKA_TASK_TYPE: config.task.type,
    ORKA_ATTEMPT: String(config.attempt),
    ORKA_JOURNAL_RUN: String(config.journal.run),
    ORKA_JOURNAL_RESUME: String(config.journal.resume),
    ORKA_AGENT_NAME: config.agentName ?? "",
    ORKA_PARENT_TASK: config.parentTask ?? "",
    ORKA_RESULT_ENDPOINT: `${config.controllerURL}/internal/v1/results/${config.task.namespace}/${config.task.name}`,
    ORKA_TRANSACTION_TOKEN_FILE: config.transactionTokenFile ?? "",
    ORKA_SESSION: config.session ? json(config.session) : "",
    ORKA_COORDINATION_ENABLED: String(config.coordination.enabled),
    ORKA_COORDINATION_MAX_DEPTH: String(config.coordination.maxDepth),
    ORKA_COORDINATION_MAX_CHILDREN: String(config.coordination.maxChildren),
    ORKA_COORDINATION_ALLOWED_AGENTS: csv(config.coordination.allowedAgents),
    ORKA_COORDINATION_DEPTH: String(config.coordination.depth),
    ORKA_AUTONOMOUS_MODE: String(config.autonomous.mode),
    ORKA_AUTONOMOUS_ITERATION: String(config.autonomous.iteration),
    ORKA_AUTONOMOUS_MAX_ITERATIONS: String(config.autonomous.maxIterations),
    ORKA_APPROVAL_REQUIRED_TOOLS: csv(config.approvalRequiredTools),
    ORKA_RESOLVED_APPROVALS: json(config.resolvedApprovals ?? []),
  };
  if (config.ai) {
    const { ai } = config;
    Object.assign(env, endpointEnv(ai.endpoint), {
      ORKA_AI_FALLBACKS: json(ai.fallbacks),
      ORKA_AI_PROMPT: ai.prompt,
      ORKA_AI_SYSTEM_PROMPT: ai.systemPrompt,
      ORKA_AI_SOUL: ai.soul ?? "",
      ORKA_AI_SKILLS: json(ai.skills),
      ORKA_AI_TOOLS: csv(ai.tools),
      ORKA_AI_CUSTOM_TOOLS: json(ai.customTools),
      ORKA_AI_TEMPERATURE: optional(ai.temperature),
      ORKA_AI_MAX_TOKENS: optional(ai.maxTokens),
      ORKA_AI_TURN_BUDGET: String(ai.turnBudget),
      ORKA_AI_MODEL_CALLS: json(ai.modelCalls),
      ORKA_AI_MEMORIES: json(ai.memories),
    });
  }
  if (config.container) {
    env.ORKA_CONTAINER = json(config.container);
  }
  if (config.agent) env.ORKA_AGENT_RUN = json(config.agent);
  return env;
}

export function readAttemptEnv(env: Record<string, string | undefined>): AttemptConfig {
  const { need, optionalNumber } = reader(env);
  const config: AttemptConfig = {
    ...readBase(env),
    attempt: Number(need("ORKA_ATTEMPT")),
    journal: { run: Number(need("ORKA_JOURNAL_RUN")), resume: env.ORKA_JOURNAL_RESUME === "true" },
    task: {
      name: need("ORKA_TASK_NAME"),
      namespace: need("ORKA_TASK_NAMESPACE"),
      uid: need("ORKA_TASK_UID"),
      type: need("ORKA_TASK_TYPE") as AttemptConfig["task"]["type"],
    },
    agentName: env.ORKA_AGENT_NAME || undefined,
    parentTask: env.ORKA_PARENT_TASK || undefined,
    transactionTokenFile: env.ORKA_TRANSACTION_TOKEN_FILE || undefined,
    session: env.ORKA_SESSION ? JSON.parse(env.ORKA_SESSION) : undefined,
    coordination: {
      enabled: env.ORKA_COORDINATION_ENABLED === "true",
      maxDepth: Number(env.ORKA_COORDINATION_MAX_DEPTH ?? COORDINATION_DEFAULTS.maxDepth),
      maxChildren: Number(env.ORKA_COORDINATION_MAX_CHILDREN ?? COORDINATION_DEFAULTS.maxConcurrentChildren),
      allowedAgents: splitCsv(env.ORKA_COORDINATION_ALLOWED_AGENTS),
      depth: Number(env.ORKA_COORDINATION_DEPTH ?? 0),
    },
    autonomous: {
      mode: env.ORKA_AUTONOMOUS_MODE === "true",
      iteration: Number(env.ORKA_AUTONOMOUS_ITERATION ?? 0),
      maxIterations: Number(env.ORKA_AUTONOMOUS_MAX_ITERATIONS ?? 0),
    },
    approvalRequiredTools: splitCsv(env.ORKA_APPROVAL_REQUIRED_TOOLS),
    resolvedApprovals: JSON.parse(env.ORKA_RESOLVED_APPROVALS || "[]"),
  };
  if (env.ORKA_AI_PROVIDER) {
    config.ai = {
      endpoint: readEndpoint(env),
      fallbacks: JSON.parse(env.ORKA_AI_FALLBACKS || "[]"),
      prompt: env.ORKA_AI_PROMPT ?? "",
      systemPrompt: env.ORKA_AI_SYSTEM_PROMPT ?? "",
      soul: env.ORKA_AI_SOUL || undefined,
      skills: JSON.parse(env.ORKA_AI_SKILLS || "[]"),
      tools: splitCsv(env.ORKA_AI_TOOLS),
      customTools: JSON.parse(env.ORKA_AI_CUSTOM_TOOLS || "[]"),
      temperature: optionalNumber("ORKA_AI_TEMPERATURE"),
      maxTokens: optionalNumber("ORKA_AI_MAX_TOKENS"),
      turnBudget: Number(env.ORKA_AI_TURN_BUDGET ?? 10),
      modelCalls: JSON.parse(need("ORKA_AI_MODEL_CALLS")),
      memories: JSON.parse(need("ORKA_AI_MEMORIES")),
    };
  }
  if (env.ORKA_CONTAINER) config.container = JSON.parse(env.ORKA_CONTAINER);
  if (env.ORKA_AGENT_RUN) config.agent = JSON.parse(env.ORKA_AGENT_RUN);
  return config;
}

/** Reads the variables of an attempt's environment; a missing required one is a broken runner, said by name. */
function reader(env: Record<string, string | undefined>) {
  return {
    need(name: string): string {
      const value = env[name];
      if (value === undefined) throw new OrkaError("internal", `worker environment is missing ${name}: start the worker with the environment its runner built (attempt-config.ts)`);
      return value;
    },
    optionalNumber: (name: string) => (env[name] ? Number(env[name]) : undefined),
  };
}

/** What every attempt gets, whatever it runs: its id, the control plane and its token there, its directories, the tool settings. */
type AttemptBase = Pick<AttemptConfig, "attemptId" | "controllerURL" | "token" | "workspaceDir" | "artifactsDir" | "tmpDir" | "toolSettings">;

function baseEnv(config: AttemptBase): Record<string, string> {
  return {
    ORKA_ATTEMPT_ID: config.attemptId,
    ORKA_CONTROLLER_URL: config.controllerURL,
    ORKA_WORKER_TOKEN: config.token,
    ORKA_WORKSPACE_DIR: config.workspaceDir,
    ORKA_ARTIFACTS_DIR: config.artifactsDir,
    ORKA_TMP_DIR: config.tmpDir,
    ORKA_TOOL_SETTINGS: json(config.toolSettings),
  };
}

function readBase(env: Record<string, string | undefined>): AttemptBase {
  const { need } = reader(env);
  return {
    attemptId: need("ORKA_ATTEMPT_ID"),
    controllerURL: need("ORKA_CONTROLLER_URL"),
    token: need("ORKA_WORKER_TOKEN"),
    workspaceDir: need("ORKA_WORKSPACE_DIR"),
    artifactsDir: need("ORKA_ARTIFACTS_DIR"),
    tmpDir: need("ORKA_TMP_DIR"),
    toolSettings: JSON.parse(need("ORKA_TOOL_SETTINGS")),
  };
}

/** The model endpoint an attempt calls, the same variables for a Task's attempt and a compat request's. */
function endpointEnv(endpoint: ModelEndpoint): Record<string, string> {
  return {
    ORKA_AI_PROVIDER: endpoint.type,
    ORKA_AI_PROVIDER_NAME: endpoint.name,
    ORKA_AI_MODEL: endpoint.model,
    ORKA_AI_BASE_URL: endpoint.baseURL ?? "",
    ORKA_AI_API_KEY: endpoint.apiKey ?? "",
    ORKA_AI_AZURE: endpoint.azure ? json(endpoint.azure) : "",
    ORKA_AI_SCRIPT: endpoint.script ? json(endpoint.script) : "",
    ORKA_AI_REPLAY: endpoint.replay ? json(endpoint.replay) : "",
    ORKA_AI_TIMEOUT_MS: optional(endpoint.timeoutMs),
  };
}

function readEndpoint(env: Record<string, string | undefined>): ModelEndpoint {
  const { need, optionalNumber } = reader(env);
  return {
    name: need("ORKA_AI_PROVIDER_NAME"),
    type: need("ORKA_AI_PROVIDER") as ModelEndpoint["type"],
    model: need("ORKA_AI_MODEL"),
    baseURL: env.ORKA_AI_BASE_URL || undefined,
    apiKey: env.ORKA_AI_API_KEY || undefined,
    azure: env.ORKA_AI_AZURE ? JSON.parse(env.ORKA_AI_AZURE) : undefined,
    script: env.ORKA_AI_SCRIPT ? JSON.parse(env.ORKA_AI_SCRIPT) : undefined,
    replay: env.ORKA_AI_REPLAY ? JSON.parse(env.ORKA_AI_REPLAY) : undefined,
    timeoutMs: optionalNumber("ORKA_AI_TIMEOUT_MS"),
  };
}

/**
 * A compat request with server-side tools, run as an attempt of the same runner as a Task's (a
 * worker process here, a Job on Kubernetes): its conversation, model and tools, and where to send
 * its progress notes and answer (/internal/v1/compat/<attemptId>, with `token`).
 */
export interface CompatAttemptConfig extends AttemptBase {
  namespace: string;
  endpoint: ModelEndpoint;
  modelCalls: ModelCallSettings;
  system: string;
  messages: ChatMessage[];
  tools: string[];
  maxTokens: number;
  temperature?: number;
  turnBudget: number;
  /** The client streams: it wants the progress notes (retries, tool calls) as they happen. */
  progress: boolean;
}

/** What a compat attempt reports at its end: the answer, or why there is none (with its code when it is an OrkaError). */
export type CompatOutcome =
  | { answer: { text: string; usage: { inputTokens: number; outputTokens: number } } }
  | { error: { message: string; code?: ErrorCode; field?: string } };

export function compatAttemptEnv(config: CompatAttemptConfig): Record<string, string> {
  return {
    ...baseEnv(config),
    ORKA_ATTEMPT_KIND: "compat",
    ORKA_COMPAT_NAMESPACE: config.namespace,
    ...endpointEnv(config.endpoint),
    ORKA_AI_MODEL_CALLS: json(config.modelCalls),
    ORKA_AI_SYSTEM_PROMPT: config.system,
    ORKA_COMPAT_MESSAGES: json(config.messages),
    ORKA_AI_TOOLS: csv(config.tools),
    ORKA_AI_MAX_TOKENS: String(config.maxTokens),
    ORKA_AI_TEMPERATURE: optional(config.temperature),
    ORKA_AI_TURN_BUDGET: String(config.turnBudget),
    ORKA_COMPAT_PROGRESS: String(config.progress),
  };
}

export function readCompatAttemptEnv(env: Record<string, string | undefined>): CompatAttemptConfig {
  const { need, optionalNumber } = reader(env);
  return {
    ...readBase(env),
    namespace: need("ORKA_COMPAT_NAMESPACE"),
    endpoint: readEndpoint(env),
    modelCalls: JSON.parse(need("ORKA_AI_MODEL_CALLS")),
    system: env.ORKA_AI_SYSTEM_PROMPT ?? "",
    messages: JSON.parse(need("ORKA_COMPAT_MESSAGES")),
    tools: splitCsv(env.ORKA_AI_TOOLS),
    maxTokens: Number(need("ORKA_AI_MAX_TOKENS")),
    temperature: optionalNumber("ORKA_AI_TEMPERATURE"),
    turnBudget: Number(need("ORKA_AI_TURN_BUDGET")),
    progress: env.ORKA_COMPAT_PROGRESS === "true",
  };
}

/** What a worker was started for, told by `ORKA_ATTEMPT_KIND` (a Task's attempt when unset). */
export type WorkerAssignment = { kind: "task"; config: AttemptConfig } | { kind: "compat"; config: CompatAttemptConfig };

export function readWorkerEnv(env: Record<string, string | undefined>): WorkerAssignment {
  return env.ORKA_ATTEMPT_KIND === "compat" ? { kind: "compat", config: readCompatAttemptEnv(env) } : { kind: "task", config: readAttemptEnv(env) };
}
