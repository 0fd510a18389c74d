/** Starts, watches and stops attempts; the controller never spawns processes itself. */

export interface AttemptDirs {
  workspaceDir: string;
  artifactsDir: string;
  tmpDir: string;
}

export interface AttemptExit {
  attemptId: string;
  exitCode: number;
  reason?: string;
}

export interface WorkloadRunner {
  /** Creates the attempt's private directories. */
  prepare(attemptId: string): Promise<AttemptDirs>;
  /** Starts the attempt with its P3.6 environment. */
  start(attemptId: string, env: Record<string, string>): void;
  /** Stops the attempt and everything it started; its exit is still reported. Idempotent. */
  kill(attemptId: string, reason: string): void;
  isRunning(attemptId: string): boolean;
  /** Removes what the attempt left behind (its directories). */
  cleanup(attemptId: string): Promise<void>;
  onLog(listener: (attemptId: string, chunk: string) => void): void;
  onExit(listener: (exit: AttemptExit) => void): void;
  close(): Promise<void>;
}
