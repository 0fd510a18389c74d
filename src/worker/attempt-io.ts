/** What a worker gives an attempt: where its output goes and the signal that stops it. */
export interface AttemptIO {
  log: (text: string) => void;
  signal: AbortSignal;
}

/** How an attempt ended, as the controller learns it: the exit code and, when it failed, why. */
export interface AttemptOutcome {
  exitCode: number;
  reason?: string;
}
