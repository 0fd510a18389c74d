import { readdir, readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import type { ToolDefinition } from "../providers/model.ts";
import { DEFAULT_LIMITS, exitCodeOf, runSandboxed, SandboxUnavailableError } from "../sandbox/bwrap.ts";
import type { ExecutionEventInput } from "../store/data-store.ts";
import { toolDefinition } from "../tools/define.ts";
import { builtinTool } from "../tools/registry.ts";
import { errorMessage } from "../util/errors.ts";
import type { AttemptConfig } from "./attempt-config.ts";
import { ControlPlaneClient } from "./client.ts";
import { DEFAULT_MAX_TOKENS, runToolLoop } from "./loop.ts";
import { modelWithFallbacks } from "./models.ts";
import { assembleSystemPrompt } from "./prompt.ts";
import { toolExecutor } from "./tool-executor.ts";
import { Workspace } from "../tools/core/workspace.ts";

export const MAX_ARTIFACT_BYTES = 10 * 1024 * 1024;
const MAX_CONTAINER_OUTPUT_BYTES = 4 * 1024 * 1024;

export interface AttemptIO {
  log: (text: string) => void;
  signal: AbortSignal;
}

export interface AttemptOutcome {
  exitCode: number;
  reason?: string;
}

/** Runs one attempt of a Task to its end; the controller learns the outcome from the exit code. */
export async function runAttempt(config: AttemptConfig, io: AttemptIO): Promise<AttemptOutcome> {
  const client = new ControlPlaneClient({
    controllerURL: config.controllerURL,
    token: config.token,
    namespace: config.task.namespace,
    task: config.task.name,
  });
  const events = new EventSink(client, io.log);
  try {
    if (config.container) return await runContainerAttempt(config, client, events, io);
    if (config.ai) return await runAiAttempt(config, client, events, io);
    return { exitCode: 1, reason: `task type ${config.task.type} is not supported by this worker` };
  } finally {
    await events.flush();
  }
}

async function runAiAttempt(config: AttemptConfig, client: ControlPlaneClient, events: EventSink, io: AttemptIO): Promise<AttemptOutcome> {
  const ai = config.ai!;
  const emit = (event: ExecutionEventInput) => events.emit(event);
  emit({ type: "WorkerStarted", summary: `attempt ${config.attempt}: ${ai.endpoint.name}/${ai.endpoint.model}, ${ai.tools.length} tools` });
  try {
    const customTools = new Map(ai.customTools.map((t) => [t.name, t]));
    const { text: result } = await runToolLoop({
      model: modelWithFallbacks([ai.endpoint, ...ai.fallbacks], {
        retryBaseMs: ai.retryBaseMs,
        onNotice: (message) => emit({ type: "ModelRequestRetried", severity: "warning", summary: message }),
      }),
      modelName: ai.endpoint.model,
      system: assembleSystemPrompt({ skills: ai.skills, systemPrompt: ai.systemPrompt, autonomous: config.autonomous.mode }),
      messages: [{ role: "user", content: ai.prompt }],
      tools: offeredTools(ai.tools, customTools),
      maxTokens: ai.maxTokens ?? DEFAULT_MAX_TOKENS,
      temperature: ai.temperature,
      turnBudget: ai.turnBudget,
      executeTool: toolExecutor({
        allowed: ai.tools,
        customTools: new Set(customTools.keys()),
        callCustomTool: (name, args) => client.callTool(name, args),
        context: {
          namespace: config.task.namespace,
          taskName: config.task.name,
          workspaceDir: config.workspaceDir,
          tmpDir: config.tmpDir,
          workspace: new Workspace([
            { virtual: "/workspace", host: config.workspaceDir },
            { virtual: "/tmp", host: config.tmpDir },
          ]),
          settings: config.toolSettings,
          signal: io.signal,
        },
      }),
      emit,
      signal: io.signal,
    });
    await client.postResult(result);
    emit({ type: "ResultSubmitted", summary: `result of ${result.length} characters` });
    await uploadArtifacts(config.artifactsDir, client, emit);
    emit({ type: "WorkerCompleted", summary: "attempt succeeded" });
    return { exitCode: 0 };
  } catch (err) {
    const reason = io.signal.aborted ? "attempt was stopped" : errorMessage(err);
    emit({ type: "WorkerFailed", severity: "error", summary: reason });
    return { exitCode: 1, reason };
  }
}

function offeredTools(names: string[], customTools: Map<string, ToolDefinition>): ToolDefinition[] {
  return names.flatMap((name) => {
    const builtin = builtinTool(name);
    if (builtin) return [toolDefinition(builtin)];
    const custom = customTools.get(name);
    return custom ? [custom] : [];
  });
}

async function uploadArtifacts(dir: string, client: ControlPlaneClient, emit: (event: ExecutionEventInput) => void): Promise<void> {
  let files: string[];
  try {
    files = await readdir(dir);
  } catch {
    return;
  }
  for (const file of files) {
    const path = join(dir, file);
    try {
      const info = await stat(path);
      if (!info.isFile()) continue;
      if (info.size > MAX_ARTIFACT_BYTES) throw new Error(`${info.size} bytes is over the 10 MB limit`);
      await client.uploadArtifact(file, await readFile(path));
    } catch (err) {
      emit({ type: "ArtifactUploadFailed", severity: "warning", summary: `artifact ${file} not uploaded: ${errorMessage(err)}` });
    }
  }
}

async function runContainerAttempt(config: AttemptConfig, client: ControlPlaneClient, events: EventSink, io: AttemptIO): Promise<AttemptOutcome> {
  const container = config.container!;
  try {
    const run = await runSandboxed({
      command: container.command,
      workDir: config.workspaceDir,
      extraBinds: [{ host: config.artifactsDir, sandbox: "/artifacts" }],
      env: {
        ...container.env,
        ORKA_TASK_NAME: config.task.name,
        ORKA_TASK_NAMESPACE: config.task.namespace,
        ORKA_TASK_UID: config.task.uid,
        ORKA_ARTIFACTS_DIR: "/artifacts",
      },
      network: container.network,
      limits: DEFAULT_LIMITS,
      maxOutputBytes: MAX_CONTAINER_OUTPUT_BYTES,
      signal: io.signal,
      onOutput: io.log,
    });
    const output = run.stdout + run.stderr;
    if (output) await client.postResult(output);
    await uploadArtifacts(config.artifactsDir, client, (event) => events.emit(event));
    if (run.exitCode === 0) return { exitCode: 0 };
    return {
      exitCode: exitCodeOf(run),
      reason: run.signal ? (run.signal === "SIGXCPU" ? "CPU limit exceeded" : `killed by ${run.signal}`) : "Error",
    };
  } catch (err) {
    if (err instanceof SandboxUnavailableError) return { exitCode: 1, reason: err.message };
    throw err;
  }
}

/** Sends execution events in order, without making the loop wait on each one. */
class EventSink {
  private chain: Promise<void> = Promise.resolve();
  private readonly client: ControlPlaneClient;
  private readonly log: (text: string) => void;

  constructor(client: ControlPlaneClient, log: (text: string) => void) {
    this.client = client;
    this.log = log;
  }

  emit(event: ExecutionEventInput): void {
    this.log(`${new Date().toISOString()} ${event.type}: ${event.summary}\n`);
    this.chain = this.chain.then(() => this.client.postEvent(event).then(() => undefined, (err) => this.log(`event not recorded: ${errorMessage(err)}\n`)));
  }

  flush(): Promise<void> {
    return this.chain;
  }
}
