import { withCallSignal } from "../util/call-signal.ts";

/** One request to the control plane's worker API, with its path under `/internal/v1`. */
export interface ControlPlaneRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string | Buffer;
}

export interface ControlPlaneReply {
  status: number;
  text: string;
}

/** How long a call may wait for its answer, and what else may end the wait. */
export interface ControlPlaneWait {
  /** After this long the call fails with an error named `TimeoutError`. */
  timeoutMs: number;
  /** When it aborts, the call fails with its reason. */
  signal?: AbortSignal;
}

/**
 * How a worker reaches the control plane. Every transport carries the same requests to the same
 * routes, with the same checks: over HTTP from a Job, over the pool's IPC channel from a local worker
 * process (no socket, no HTTP parsing on either side).
 */
export interface ControlPlaneTransport {
  send(request: ControlPlaneRequest, wait: ControlPlaneWait): Promise<ControlPlaneReply>;
  /** How long a call waits for its answer unless it says otherwise. */
  timeoutMs: number;
}

/** A request over the network can be lost without a word: one that has no answer in this time is given up. */
const HTTP_TIMEOUT_MS = 10_000;

/** The control plane at `controllerURL`, over HTTP. */
export function httpTransport(controllerURL: string): ControlPlaneTransport {
  return {
    timeoutMs: HTTP_TIMEOUT_MS,
    send: (request, wait) =>
      withCallSignal({ timeoutMs: wait.timeoutMs, parents: [wait.signal] }, async (signal) => {
        const response = await fetch(`${controllerURL}/internal/v1/${request.path}`, { method: request.method, headers: request.headers, body: request.body, signal });
        return { status: response.status, text: await response.text() };
      }),
  };
}
