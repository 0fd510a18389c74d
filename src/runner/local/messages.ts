/** The IPC protocol between the local runner and its worker processes. */
export type ToWorker =
  | { type: "start"; attemptId: string; env: Record<string, string> }
  | { type: "kill"; attemptId: string; reason: string };

export type FromWorker =
  | { type: "ready" }
  | { type: "log"; attemptId: string; chunk: string }
  | { type: "exit"; attemptId: string; exitCode: number; reason?: string };
