import type { ExecutionEventInput } from "../store/data-store.ts";
import type { AgentRun, AttemptConfig } from "../runner/attempt-config.ts";
import type { McpBroker } from "../mcp/broker.ts";
import type { RuntimeAdapter } from "../runtimes/adapter.ts";
import { cliInstallDir, ensureCli } from "../runtimes/install.ts";
import { startProviderProxy, type ProviderProxy } from "../runtimes/provider-proxy.ts";
import { runtimeAdapter } from "../runtimes/registry.ts";
import { prepareSessionPaths, runSession, type SessionOutcome } from "../runtimes/session.ts";
import { errorMessage } from "../util/errors.ts";
import { attemptToolExecutor } from "./attempt-tools.ts";
import { brokeredToolRunner } from "./brokered-calls.ts";
import type { ControlPlaneClient } from "./client.ts";
import { succeeded, type AttemptIO, type AttemptOutcome } from "./attempt-io.ts";

/** One broker per worker process: each session gets its own route and bearer on it. Loaded with the first session (the MCP SDK is large). */
let broker: Promise<McpBroker> | undefined;
const sharedBroker = () => (broker ??= import("../mcp/broker.ts").then(({ startMcpBroker }) => startMcpBroker()));

/**
 * A coding-agent session: the CLI runs in a private root, reaches the model through a proxy that holds
 * the Provider key, and Orka's tools through the broker, which has every call checked by the control plane.
 */
export async function runAgentAttempt(config: AttemptConfig, client: ControlPlaneClient, emit: (event: ExecutionEventInput) => void, io: AttemptIO): Promise<AttemptOutcome> {
  const run = config.agent!;
  const adapter = runtimeAdapter(run.runtime);
  emit({ type: "WorkerStarted", summary: `attempt ${config.attempt}: ${run.runtime} session on ${run.endpoint.name}/${run.policy.model}, ${run.brokered.length} Orka tools` });
  try {
    const command = run.command ?? [await ensureCli(adapter.cli, run.cliCacheDir, io.signal)];
    // The pinned CLI runs from its whole package tree; a replacement command names its own files.
    const readPaths = [...run.readPaths, ...(run.command ? [] : [cliInstallDir(adapter.cli, run.cliCacheDir)])];
    const outcome = await launch(config, run, adapter, { command, readPaths }, client, io);
    if (io.signal.aborted) throw io.signal.reason ?? new Error("attempt was stopped");
    if (outcome.exitCode !== 0) return failed(emit, exitReason(run, outcome));
    const answer = adapter.finalAnswer(outcome.stdout);
    await client.postResult(answer);
    for (const event of succeeded(answer)) emit(event);
    return { exitCode: 0 };
  } catch (err) {
    return failed(emit, io.signal.aborted ? "attempt was stopped" : errorMessage(err));
  }
}

async function launch(
  config: AttemptConfig,
  run: AgentRun,
  adapter: RuntimeAdapter,
  cli: { command: string[]; readPaths: string[] },
  client: ControlPlaneClient,
  io: AttemptIO,
): Promise<SessionOutcome> {
  const execute = attemptToolExecutor(config, client, io.signal, { allowed: run.brokered.map((t) => t.name), custom: run.brokered.filter((t) => t.digest).map((t) => t.name) });
  const broker = await sharedBroker();
  const session = broker.open({ tools: run.brokered, run: brokeredToolRunner({ config, client, execute }) });
  let proxy: ProviderProxy | undefined;
  try {
    proxy = await startProviderProxy({ endpoint: run.endpoint, wire: adapter.wire });
    const paths = { ...(await prepareSessionPaths(config.tmpDir, config.attemptId)), workspace: config.workspaceDir };
    return await runSession({
      ...cli,
      adapter,
      launch: { policy: run.policy, prompt: run.prompt, paths, mcp: { url: session.url, bearer: session.bearer }, provider: { baseURL: proxy.baseURL, token: proxy.token } },
      cwd: config.workspaceDir,
      onOutput: io.log,
      signal: io.signal,
    });
  } finally {
    session.close();
    await proxy?.close();
  }
}

function exitReason(run: AgentRun, outcome: SessionOutcome): string {
  const how = outcome.signal ? `was killed by ${outcome.signal}` : `exited with code ${outcome.exitCode}`;
  const tail = outcome.stderrTail.trim();
  return `${run.runtime} ${how}${tail ? `: ${tail}` : ""}`;
}

function failed(emit: (event: ExecutionEventInput) => void, reason: string): AttemptOutcome {
  emit({ type: "WorkerFailed", severity: "error", summary: reason });
  return { exitCode: 1, reason };
}
