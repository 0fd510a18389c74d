import type { CheckoutPlan } from "../workspace/checkout.ts";
import type { GitDirs } from "../workspace/git.ts";

/** Starts, watches and stops attempts; the controller never spawns processes itself. */

export interface AttemptDirs {
  workspaceDir: string;
  artifactsDir: string;
  tmpDir: string;
  /** The attempt's transaction token as a file only it can read; absent when it has none. */
  transactionTokenFile?: string;
}

/** What an attempt gets on disk beside its directories. */
export interface AttemptFiles {
  /** A delegated child's exchanged transaction token. */
  transactionToken?: string;
  /** The repository to check out into the workspace before the attempt starts (a resumed attempt keeps its own). */
  checkout?: CheckoutPlan;
}

/** The exit code of an attempt whose worker died under it (killed, crashed, or the server went away). */
export const LOST_EXIT_CODE = 137;

export interface AttemptExit {
  attemptId: string;
  exitCode: number;
  reason?: string;
}

export interface WorkloadRunner {
  /** Creates the attempt's private directories and writes its files there. */
  prepare(attemptId: string, files?: AttemptFiles): Promise<AttemptDirs>;
  /** Gives a lost attempt's directories to the attempt that resumes it (fresh ones if they are gone), with its files written anew. */
  adopt(lostAttemptId: string, attemptId: string, files?: AttemptFiles): Promise<AttemptDirs>;
  /** Starts the attempt with its `ORKA_*` environment (see attempt-config.ts). */
  start(attemptId: string, env: Record<string, string>): void;
  /** Stops the attempt and everything it started; its exit is still reported. Idempotent. */
  kill(attemptId: string, reason: string): void;
  isRunning(attemptId: string): boolean;
  /**
   * Checks a commit out for the attempt to read (a pull request head run_validation copies): a directory
   * of its own beside the attempt's, never its workspace, removed with the attempt. Returns the work tree.
   */
  checkOutForAttempt(attemptId: string, plan: CheckoutPlan): Promise<string>;
  /** Where the attempt's workspace and Orka's git directory for it are, while they exist. */
  workspaceOf(attemptId: string): GitDirs;
  /**
   * Removes what the attempt left behind (its directories). One still running is killed first, and its
   * directories go once it has ended (a kill is bounded), so it cannot write into them after they went.
   */
  cleanup(attemptId: string): Promise<void>;
  onLog(listener: (attemptId: string, chunk: string) => void): void;
  onExit(listener: (exit: AttemptExit) => void): void;
  close(): Promise<void>;
}
