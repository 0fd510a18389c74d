import { BrokerRefusal, MAX_BROKERED_RESULT_BYTES, type BrokerCall, type BrokerCallResult, type BrokeredCallRunner } from "../mcp/calls.ts";
import type { ToolCall } from "../providers/model.ts";
import type { AttemptConfig } from "../runner/attempt-config.ts";
import { errorMessage, OrkaError } from "../util/errors.ts";
import { cutUtf8 } from "../util/text.ts";
import type { ControlPlaneClient } from "./client.ts";
import type { ToolCallContext } from "./tool-call.ts";

export interface BrokeredToolRunnerOptions {
  config: AttemptConfig;
  client: ControlPlaneClient;
  /** The executor the AI loop uses (`toolExecutor`), over the session's brokered tools. */
  execute: (call: ToolCall, how?: ToolCallContext) => Promise<string>;
}

/** What the control plane answers when asked whether a call may run. */
interface CallClearance {
  operationId: string;
  /** The call id was seen before: its recorded result (or its unknown outcome), and nothing runs. */
  replay?: { text: string; isError: boolean };
}

/**
 * Runs a coding CLI's brokered tool calls: the control plane clears each call first (and answers a
 * repeated one from its ledger), the worker runs it with the AI loop's executor, and the control plane
 * commits the result, still only while the Task runs, before the CLI gets it.
 */
export function brokeredToolRunner({ config, client, execute }: BrokeredToolRunnerOptions): BrokeredCallRunner {
  const callsPath = `broker/${config.task.namespace}/${config.task.name}/calls`;
  return async (call, signal) => {
    const clearance = await cleared(() => client.post(callsPath, { tool: call.name, callId: call.callId, arguments: call.arguments }, { signal }) as Promise<CallClearance>);
    if (clearance.replay) return { ...clearance.replay, replayed: true };
    const result = await untilAborted(run(execute, call, clearance.operationId), signal);
    try {
      await client.post(`${callsPath}/${clearance.operationId}/result`, result, { signal });
    } catch (err) {
      if (err instanceof OrkaError && err.code === "permission_denied") {
        throw new BrokerRefusal("failed", "the session was revoked while the call ran; its result was dropped");
      }
      throw new BrokerRefusal("failed", `the call's result could not be recorded: ${errorMessage(err)}`);
    }
    return result;
  };
}

/** The control plane's answer; its refusal (403) is the call's, anything else is the broker failing. */
async function cleared(ask: () => Promise<CallClearance>): Promise<CallClearance> {
  try {
    return await ask();
  } catch (err) {
    if (err instanceof OrkaError && err.code === "permission_denied") throw new BrokerRefusal("not_authorized", err.message);
    throw new BrokerRefusal("failed", `the control plane could not clear the call: ${errorMessage(err)}`);
  }
}

/** The tool's answer, or its error as an error result: the CLI sees why, as a model in the AI loop does. */
async function run(execute: BrokeredToolRunnerOptions["execute"], call: BrokerCall, operationId: string): Promise<BrokerCallResult> {
  try {
    const text = await execute({ id: call.callId, name: call.name, arguments: JSON.stringify(call.arguments) }, { interrupted: false, key: operationId });
    return { text: capped(text), isError: false };
  } catch (err) {
    return { text: capped(errorMessage(err)), isError: true };
  }
}

/** A revoked session or a gone client stops waiting for the tool; its result is then dropped, and the ledger keeps the call unsettled. */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(new BrokerRefusal("failed", "the call was cancelled"));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new BrokerRefusal("failed", "the call was cancelled while the tool ran; its result was dropped"));
    signal.addEventListener("abort", onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

const TRUNCATION_MARK = "\n[result truncated: a brokered call answers at most 1 MiB]";

/** At most MAX_BROKERED_RESULT_BYTES, with a marker when cut: what the CLI gets is what the ledger records. */
function capped(text: string): string {
  if (Buffer.byteLength(text, "utf8") <= MAX_BROKERED_RESULT_BYTES) return text;
  return `${cutUtf8(text, MAX_BROKERED_RESULT_BYTES - Buffer.byteLength(TRUNCATION_MARK)).text}${TRUNCATION_MARK}`;
}
