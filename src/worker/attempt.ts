import { constants, existsSync, readdirSync } from "node:fs";
import { open } from "node:fs/promises";
import { join } from "node:path";
import { type ToolDefinition, DEFAULT_MAX_TOKENS, type ChatMessage } from "../providers/model.ts";
import { DEFAULT_LIMITS, exitCodeOf, runSandboxed, SandboxUnavailableError } from "../sandbox/bwrap.ts";
import { fitEvent, type ExecutionEventInput } from "../store/data-store.ts";
import { toolDefinition } from "../tools/define.ts";
import { builtinTool } from "../tools/registry.ts";
import { errorMessage, OrkaError } from "../util/errors.ts";
import type { AttemptConfig } from "../runner/attempt-config.ts";
import { ControlPlaneClient } from "./client.ts";
import { runToolLoop } from "./loop.ts";
import { modelWithFallbacks } from "../providers/fallbacks.ts";
import { assembleSystemPrompt, autonomousPrompt, boundedHistory } from "./prompt.ts";
import { mustMarkStart } from "./tool-executor.ts";
import { attemptToolExecutor } from "./attempt-tools.ts";
import { runAgentAttempt } from "./agent-attempt.ts";
import { succeeded, type AttemptIO, type AttemptOutcome } from "./attempt-io.ts";
import { AttemptJournal, loadReplay, type Replay } from "./journal.ts";

export const MAX_ARTIFACT_BYTES = 10 * 1024 * 1024;
const MAX_CONTAINER_OUTPUT_BYTES = 4 * 1024 * 1024;
/** Where a container Task finds its own transaction token. */
const SANDBOX_TOKEN_FILE = "/run/orka/transaction-token";


/** Runs one attempt of a Task to its end; the controller learns the outcome from the exit code. */
export async function runAttempt(config: AttemptConfig, io: AttemptIO): Promise<AttemptOutcome> {
  const client = new ControlPlaneClient({
    transport: io.transport,
    token: config.token,
    namespace: config.task.namespace,
    task: config.task.name,
  });
  const events = new EventSink(client, io.log);
  try {
    if (config.container) return await runContainerAttempt(config, client, events, io);
    if (config.ai) return await runAiAttempt(config, client, events, io);
    if (config.agent) return await runAgentAttempt(config, client, (event) => events.emit(event), io);
    return { exitCode: 1, reason: `task type ${config.task.type} is not supported by this worker` };
  } finally {
    await events.flush();
  }
}

async function runAiAttempt(config: AttemptConfig, client: ControlPlaneClient, events: EventSink, io: AttemptIO): Promise<AttemptOutcome> {
  const ai = config.ai!;
  let journal: AttemptJournal | undefined;
  // Each event says which journal step it happened at: `orka task fork --at` that step continues from there.
  const emit = (event: ExecutionEventInput) => events.emit({ ...event, ...journal?.position() });
  emit({ type: "WorkerStarted", summary: `attempt ${config.attempt}: ${ai.endpoint.name}/${ai.endpoint.model}, ${ai.tools.length} tools` });
  try {
    const customTools = new Map(ai.customTools.map((t) => [t.name, t]));
    let parked: string | undefined;
    const session = new SessionTranscript(config, client, emit);
    const start = await startingPoint(config, client, session, emit);
    journal = new AttemptJournal(client, events, {
      run: config.journal.run,
      taskName: config.task.name,
      taskUid: config.task.uid,
      seq: start.replay?.steps,
      written: start.replay?.messages,
      // Nothing is left once the answer is written when no session takes it and no artifact waits for upload.
      closing: (answer) => (config.session?.append || artifactNames(config.artifactsDir).length > 0 ? undefined : succeeded(answer)),
    });
    const { text: result } = await runToolLoop({
      model: modelWithFallbacks([ai.endpoint, ...ai.fallbacks], {
        ...ai.modelCalls,
        onNotice: (message) => emit({ type: "ModelRequestRetried", severity: "warning", summary: message }),
      }),
      modelName: ai.endpoint.model,
      system: start.system,
      messages: start.messages,
      journal,
      resume: start.replay?.resume,
      marksStart: mustMarkStart,
      onMessage: (message) => session.append(message),
      stopAfterTool: () => parked,
      tools: offeredTools(ai.tools, customTools),
      maxTokens: ai.maxTokens ?? DEFAULT_MAX_TOKENS,
      temperature: ai.temperature,
      turnBudget: ai.turnBudget,
      executeTool: attemptToolExecutor(config, client, io.signal, {
        allowed: ai.tools,
        custom: customTools.keys(),
        park: (message) => void (parked = message),
      }),
      emit,
      signal: io.signal,
    });
    await session.flush();
    if (journal.sentClosingEvents) return { exitCode: 0 };
    const [submitted, completed] = succeeded(result);
    // A parked iteration has no answer: its text is the park notice, which is not the Task's result.
    if (!parked) {
      if (!journal.resultWritten) await client.postResult(result);
      emit(submitted);
    }
    await uploadArtifacts(config.artifactsDir, client, emit);
    emit(parked ? { type: "WorkerParked", summary: `attempt ended: ${parked}` } : completed);
    return { exitCode: 0 };
  } catch (err) {
    const reason = io.signal.aborted ? "attempt was stopped" : errorMessage(err);
    emit({ type: "WorkerFailed", severity: "error", summary: reason });
    return { exitCode: 1, reason };
  }
}

/**
 * The conversation to start from: rebuilt from the journal when resuming a lost attempt (nothing
 * is fetched or appended again), else the session history, plan and the memories the controller
 * put in the config, for a fresh start.
 */
async function startingPoint(config: AttemptConfig, client: ControlPlaneClient, session: SessionTranscript, emit: (event: ExecutionEventInput) => void): Promise<{ system: string; messages: ChatMessage[]; replay?: Replay }> {
  const ai = config.ai!;
  if (config.journal.resume) {
    const replay = await loadReplay(client, config.journal.run);
    if (replay) {
      const where = replay.resume.final !== undefined ? "the final answer" : replay.resume.pending.length > 0 ? `${replay.resume.pending.length} tool calls without a recorded result` : "the next model turn";
      emit({ type: "AttemptResumed", severity: "warning", summary: `resumed run ${config.journal.run} after ${replay.steps} journalled steps (${replay.messages.length} messages); continuing with ${where}` });
      return { system: replay.system, messages: replay.messages, replay };
    }
    emit({ type: "AttemptResumed", severity: "warning", summary: `resumed run ${config.journal.run}: nothing was journalled yet, so it starts again` });
  }
  // What the first request needs and the config does not carry comes from the control plane; ask for all of it at once.
  const [history, plan] = await Promise.all([session.history(), config.autonomous.mode ? previousPlan(config, client) : undefined]);
  const prompt = config.autonomous.mode ? autonomousPrompt(ai.prompt, plan, config.resolvedApprovals) : ai.prompt;
  void session.append({ role: "user", content: prompt });
  const system = assembleSystemPrompt({
    skills: ai.skills,
    systemPrompt: ai.systemPrompt,
    soul: ai.soul,
    autonomous: config.autonomous.mode ? config.autonomous : undefined,
    memories: ai.memories,
    reflection: ai.tools.includes("remember") || ai.tools.includes("propose_memory"),
  });
  return { system, messages: [...history, { role: "user", content: prompt }] };
}

/** The definitions the model is offered: built-in tools from their declarations, custom Tools as the controller resolved them. */
export function offeredTools(names: readonly string[], customTools: Map<string, ToolDefinition>): ToolDefinition[] {
  return names.flatMap((name) => {
    const builtin = builtinTool(name);
    if (builtin) return [toolDefinition(builtin)];
    const custom = customTools.get(name);
    return custom ? [custom] : [];
  });
}

/** What the attempt left in its artifacts directory; nothing when it made none or it cannot be read. */
function artifactNames(dir: string): string[] {
  // An ai attempt that ran no built-in tool made no directories; a failed readdir costs an error's stack.
  if (!existsSync(dir)) return [];
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

async function uploadArtifacts(dir: string, client: ControlPlaneClient, emit: (event: ExecutionEventInput) => void): Promise<void> {
  for (const file of artifactNames(dir)) {
    try {
      const content = await readArtifact(join(dir, file));
      if (content) await client.uploadArtifact(file, content);
    } catch (err) {
      emit({ type: "ArtifactUploadFailed", severity: "warning", summary: `artifact ${file} not uploaded: ${errorMessage(err)}` });
    }
  }
}

/**
 * An artifact's bytes, or undefined when it is not a regular file. The worker may be root and the
 * sandboxed command is not: a link it left there is refused, never followed (it could name any file).
 */
async function readArtifact(path: string): Promise<Buffer | undefined> {
  let handle;
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ELOOP") throw new OrkaError("permission_denied", "it is a symbolic link; artifacts must be regular files");
    throw err;
  }
  try {
    const info = await handle.stat();
    if (!info.isFile()) return undefined;
    if (info.size > MAX_ARTIFACT_BYTES) throw new OrkaError("payload_too_large", `${info.size} bytes is over the 10 MB limit`);
    return await handle.readFile();
  } finally {
    await handle.close();
  }
}

async function runContainerAttempt(config: AttemptConfig, client: ControlPlaneClient, events: EventSink, io: AttemptIO): Promise<AttemptOutcome> {
  const container = config.container!;
  try {
    const run = await runSandboxed({
      command: container.command,
      workDir: config.workspaceDir,
      extraBinds: [
        { host: config.artifactsDir, sandbox: "/artifacts" },
        ...(config.transactionTokenFile ? [{ host: config.transactionTokenFile, sandbox: SANDBOX_TOKEN_FILE, readOnly: true }] : []),
      ],
      env: {
        ...container.env,
        ...(config.transactionTokenFile ? { ORKA_TRANSACTION_TOKEN_FILE: SANDBOX_TOKEN_FILE } : {}),
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

async function previousPlan(config: AttemptConfig, client: ControlPlaneClient): Promise<string | undefined> {
  try {
    return ((await client.get(`plans/${config.task.namespace}/${config.task.name}`)) as { planDocument: string }).planDocument;
  } catch {
    return undefined; // no plan yet: the first iteration
  }
}

/** The Task's session: earlier turns in, this attempt's turns out (in order, when `append` is set). */
class SessionTranscript {
  private chain: Promise<void> = Promise.resolve();
  private readonly config: AttemptConfig;
  private readonly client: ControlPlaneClient;
  private readonly emit: (event: ExecutionEventInput) => void;

  constructor(config: AttemptConfig, client: ControlPlaneClient, emit: (event: ExecutionEventInput) => void) {
    this.config = config;
    this.client = client;
    this.emit = emit;
  }

  private path(): string | undefined {
    const session = this.config.session;
    return session && `sessions/${this.config.task.namespace}/${encodeURIComponent(session.name)}/messages`;
  }

  async history(): Promise<ChatMessage[]> {
    const path = this.path();
    if (!path) return [];
    const messages = (await this.client.get(path, { limit: String(this.config.session!.maxMessages) })) as { role: string; content: string }[];
    return boundedHistory(messages);
  }

  append(message: ChatMessage): Promise<void> {
    const path = this.path();
    if (!path || !this.config.session!.append) return Promise.resolve();
    const body = { role: message.role, content: message.content, ...(message.role === "tool" ? { name: message.name } : {}) };
    this.chain = this.chain.then(() =>
      this.client.post(path, body).then(
        () => undefined,
        (err) => this.emit({ type: "TranscriptAppendFailed", severity: "warning", summary: errorMessage(err) }),
      ),
    );
    return this.chain;
  }

  flush(): Promise<void> {
    return this.chain;
  }
}

/** How long an event may wait for company before it is sent on its own. */
const EVENT_DELAY_MS = 100;

/**
 * Sends execution events in order, without making the loop wait on them: they go along with the
 * next journal step (one round trip for both), or on their own after a short delay.
 */
class EventSink {
  private chain: Promise<unknown> = Promise.resolve();
  private queued: ExecutionEventInput[] = [];
  private timer?: NodeJS.Timeout;
  private readonly client: ControlPlaneClient;
  private readonly log: (text: string) => void;

  constructor(client: ControlPlaneClient, log: (text: string) => void) {
    this.client = client;
    this.log = log;
  }

  emit(input: ExecutionEventInput): void {
    const event = fitEvent(input);
    this.logLine(event);
    this.queued.push(event);
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      void this.carry((batch) => this.postAlone(batch));
    }, EVENT_DELAY_MS);
  }

  /**
   * Runs `send` after everything sent before it, with the events queued until then (kept if it fails)
   * and then `closing` (dropped if it fails: what they tell of did not happen).
   */
  carry<T>(send: (batch: ExecutionEventInput[]) => Promise<T>, closing: ExecutionEventInput[] = []): Promise<T> {
    const run = this.chain.then(async () => {
      const batch = this.queued;
      this.queued = [];
      const last = closing.map(fitEvent);
      let answer: T;
      try {
        answer = await send([...batch, ...last]);
      } catch (err) {
        this.queued.unshift(...batch); // not delivered: they go with the next call
        throw err;
      }
      for (const event of last) this.logLine(event);
      return answer;
    });
    this.chain = run.catch(() => undefined);
    return run;
  }

  flush(): Promise<unknown> {
    clearTimeout(this.timer);
    this.timer = undefined;
    return this.carry((batch) => this.postAlone(batch));
  }

  private logLine(event: ExecutionEventInput): void {
    this.log(`${new Date().toISOString()} ${event.type}: ${event.summary}\n`);
  }

  private async postAlone(batch: ExecutionEventInput[]): Promise<void> {
    if (batch.length === 0) return;
    await this.client.postEvents(batch).catch((err) => this.log(`${batch.length} events not recorded: ${errorMessage(err)}\n`));
  }
}
