/** The IPC protocol between the local runner and its worker processes; each IPC message is an array of these, in order. */

/** A worker's request to the control plane's worker API (path under `/internal/v1`), answered by a `reply` with its id. */
export interface ControlPlaneCall {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string | Uint8Array;
}

export interface ControlPlaneAnswer {
  status: number;
  text: string;
}

/** What the runner tells a worker about one of its attempts. */
export type AttemptOrder = { type: "start"; attemptId: string; env: Record<string, string> } | { type: "kill"; attemptId: string; reason: string };

/** A directory tree for a worker to remove (a finished attempt's), answered by `removed` with its id. */
export type Removal = { type: "remove"; id: number; path: string };

export type ToWorker = AttemptOrder | Removal | ({ type: "reply"; id: number } & ControlPlaneAnswer);

export type FromWorker =
  | { type: "ready" }
  | { type: "log"; attemptId: string; chunk: string }
  | { type: "exit"; attemptId: string; exitCode: number; reason?: string }
  | ({ type: "call"; id: number } & ControlPlaneCall)
  /** The worker gave up on a call: what it started at the runner stops. */
  | { type: "cancel"; id: number }
  | { type: "removed"; id: number; error?: string };
