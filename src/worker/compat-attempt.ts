import { modelWithFallbacks } from "../providers/fallbacks.ts";
import type { CompatAttemptConfig, CompatOutcome } from "../runner/attempt-config.ts";
import { createToolContext } from "../tools/context.ts";
import { errorMessage } from "../util/errors.ts";
import { isRequestRefusal } from "../providers/model.ts";
import { offeredTools } from "./attempt.ts";
import type { AttemptIO, AttemptOutcome } from "./attempt-io.ts";
import { ControlPlaneClient } from "./client.ts";
import { runToolLoop, type LoopResult } from "./loop.ts";
import { toolExecutor } from "./tool-executor.ts";

/**
 * Runs one compat request that uses server-side tools: Orka's tool loop with the tools it was
 * given, in this attempt's directories. The request waits in the API server; progress notes and the
 * outcome go back to it over /internal/v1, so the same code runs in a worker process or a Job.
 */
export async function runCompatAttempt(config: CompatAttemptConfig, io: AttemptIO): Promise<AttemptOutcome> {
  const channel = new CompatChannel(new ControlPlaneClient({ transport: io.transport, token: config.token, namespace: config.namespace, task: config.attemptId }), config.attemptId);
  const progress = (note: string) => {
    if (config.progress) channel.progress(note);
  };
  let outcome: CompatOutcome;
  try {
    // A stopped request ends at once, even in the middle of a tool that does not stop itself: the
    // worker process is shared, and one that does not let go of an attempt in time is killed whole.
    outcome = { answer: await Promise.race([runLoop(config, io, progress), rejectWhenAborted(io.signal)]) };
  } catch (err) {
    if (io.signal.aborted) return { exitCode: 1, reason: "attempt was stopped" };
    // A model call that failed stays a failed completion (502) on the API side; only a refusal keeps its code.
    outcome = { error: isRequestRefusal(err) ? { message: err.message, code: err.code, field: err.field } : { message: errorMessage(err) } };
  }
  await channel.finish(outcome);
  return "answer" in outcome ? { exitCode: 0 } : { exitCode: 1, reason: outcome.error.message };
}

function rejectWhenAborted(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) => {
    if (signal.aborted) return reject(signal.reason);
    signal.addEventListener("abort", () => reject(signal.reason), { once: true });
  });
}

function runLoop(config: CompatAttemptConfig, io: AttemptIO, progress: (note: string) => void): Promise<LoopResult> {
  return runToolLoop({
    model: modelWithFallbacks([config.endpoint], { ...config.modelCalls, onNotice: progress }),
    modelName: config.endpoint.model,
    system: config.system,
    messages: config.messages,
    tools: offeredTools(config.tools, new Map()),
    maxTokens: config.maxTokens,
    temperature: config.temperature,
    turnBudget: config.turnBudget,
    executeTool: toolExecutor({
      allowed: config.tools,
      customTools: new Set(),
      callCustomTool: async () => "",
      notOffered: (name) => `tool "${name}" is not available in this request`,
      context: createToolContext({ namespace: config.namespace, taskName: config.attemptId, dirs: config, settings: config.toolSettings, signal: io.signal }),
    }),
    toolErrorText: (message) => JSON.stringify({ success: false, error: message }),
    emit: (event) => {
      if (event.type === "ToolCallCompleted") progress(`[Tool ${event.toolName} completed]`);
      if (event.type === "ToolCallFailed") progress(`[Tool ${event.toolName} failed]`);
    },
    signal: io.signal,
  });
}

/**
 * The way back to the waiting request. Notes go without holding up the loop, one after another;
 * the outcome goes after the last of them, so the client sees them in order, before the answer.
 */
class CompatChannel {
  private sent: Promise<unknown> = Promise.resolve();
  private readonly client: ControlPlaneClient;
  private readonly path: string;

  constructor(client: ControlPlaneClient, attemptId: string) {
    this.client = client;
    this.path = `compat/${encodeURIComponent(attemptId)}`;
  }

  /** A note that does not arrive is lost: it only tells the client how the work goes. */
  progress(note: string): void {
    this.sent = this.sent.then(() => this.client.post(`${this.path}/progress`, { note })).catch(() => undefined);
  }

  async finish(outcome: CompatOutcome): Promise<void> {
    await this.sent;
    await this.client.post(`${this.path}/outcome`, outcome);
  }
}
