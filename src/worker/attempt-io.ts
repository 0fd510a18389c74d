import type { ExecutionEventInput } from "../store/data-store.ts";
import type { ControlPlaneTransport } from "./transport.ts";

/** What a worker gives an attempt: where its output goes, the signal that stops it, and its way to the control plane. */
export interface AttemptIO {
  log: (text: string) => void;
  signal: AbortSignal;
  transport: ControlPlaneTransport;
}

/** How an attempt ended, as the controller learns it: the exit code and, when it failed, why. */
export interface AttemptOutcome {
  exitCode: number;
  reason?: string;
}

/** The events of an attempt that ended with `answer` as its result: submitted, then completed. */
export function succeeded(answer: string): [ExecutionEventInput, ExecutionEventInput] {
  return [
    { type: "ResultSubmitted", summary: `result of ${answer.length} characters` },
    { type: "WorkerCompleted", summary: "attempt succeeded" },
  ];
}
