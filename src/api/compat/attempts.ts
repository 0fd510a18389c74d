import { randomBytes } from "node:crypto";
import type { ModelCallSettings } from "../../providers/model.ts";
import { compatAttemptEnv, type CompatAttemptConfig, type CompatOutcome } from "../../runner/attempt-config.ts";
import type { AttemptExit, WorkloadRunner } from "../../runner/runner.ts";
import type { ToolSettings } from "../../tools/define.ts";
import { OrkaError } from "../../util/errors.ts";
import { sha256Hex } from "../../util/hash.ts";

/** How the compatible endpoints run a request with server-side tools, and call the model for one without. */
export interface CompatSettings {
  runner: WorkloadRunner;
  /** Where this server's /internal/v1 is reached: a compat attempt sends its notes and answer there. */
  controllerURL: () => string;
  toolSettings: ToolSettings;
  modelCalls: ModelCallSettings;
  /** Compat attempts that may run at once; more are refused with 429 rather than crowd out Tasks' attempts. */
  maxRunning: number;
}

/** The request's side of a compat attempt: the conversation, model and tools the API resolved. */
export type CompatJob = Omit<CompatAttemptConfig, "attemptId" | "controllerURL" | "token" | "workspaceDir" | "artifactsDir" | "tmpDir" | "toolSettings" | "modelCalls">;

type CompatResult = Extract<CompatOutcome, { answer: unknown }>["answer"];

interface Waiting {
  attemptId: string;
  tokenHash: string;
  onProgress?: (note: string) => void;
  settle: (outcome: CompatOutcome) => void;
  settled: boolean;
}

/**
 * Compat requests with server-side tools, each run as an attempt of the WorkloadRunner while its
 * HTTP request waits here. The attempt answers over /internal/v1/compat/<attemptId> with a token
 * of its own, held (hashed) only while the attempt runs.
 *
 * The waiting requests live in this process, so an attempt must reach this replica: `controllerURL`
 * is this server's own address. A deployment with several API replicas behind one Service must
 * give each replica its own address there (a Pod IP), or route /internal/v1/compat by attempt.
 */
export class CompatAttempts {
  readonly settings: CompatSettings;
  private readonly waiting = new Map<string, Waiting>();
  private readonly byTokenHash = new Map<string, Waiting>();
  /** Attempts whose directories are being prepared: they count against `maxRunning` already. */
  private preparing = 0;

  constructor(settings: CompatSettings) {
    this.settings = settings;
    settings.runner.onExit((exit) => this.exited(exit));
  }

  /** Runs the job as an attempt and waits for its answer; a client that leaves (`signal`) kills it. */
  async run(job: CompatJob, io: { signal: AbortSignal; onProgress?: (note: string) => void }): Promise<CompatResult> {
    const { runner } = this.settings;
    this.checkRoom();
    const attemptId = `compat-${randomBytes(8).toString("hex")}`;
    const token = randomBytes(32).toString("base64url");
    this.preparing++;
    let dirs;
    try {
      dirs = await runner.prepare(attemptId);
    } finally {
      this.preparing--;
    }
    if (io.signal.aborted) {
      await runner.cleanup(attemptId);
      throw io.signal.reason;
    }
    const outcome = new Promise<CompatOutcome>((resolve, reject) => {
      const waiting: Waiting = {
        attemptId,
        tokenHash: sha256Hex(token),
        onProgress: io.onProgress,
        settled: false,
        settle: (outcome) => {
          waiting.settled = true;
          io.signal.removeEventListener("abort", leave);
          resolve(outcome);
        },
      };
      const leave = () => {
        waiting.settled = true;
        runner.kill(attemptId, "the client went away");
        reject(io.signal.reason);
      };
      io.signal.addEventListener("abort", leave, { once: true });
      this.waiting.set(attemptId, waiting);
      this.byTokenHash.set(waiting.tokenHash, waiting);
    });
    const config: CompatAttemptConfig = { ...job, attemptId, controllerURL: this.settings.controllerURL(), token, ...dirs, toolSettings: this.settings.toolSettings, modelCalls: this.settings.modelCalls };
    runner.start(attemptId, compatAttemptEnv(config));
    const result = await outcome;
    if ("answer" in result) return result.answer;
    // A failure that was not Orka's own (the model's, the loop's) stays a plain error: the endpoints answer it as "completion failed".
    throw result.error.code ? new OrkaError(result.error.code, result.error.message, { field: result.error.field }) : new Error(result.error.message);
  }

  /** Refuses a request with server-side tools while the most that may run at once are running. */
  checkRoom(): void {
    const { maxRunning } = this.settings;
    if (this.preparing + this.waiting.size < maxRunning) return;
    throw new OrkaError(
      "resource_exhausted",
      `${maxRunning} requests with server-side tools are running already, the most this server runs at once (ORKA_WORKER_SLOTS): retry shortly, or send X-Orka-Tools: disabled to run tools yourself`,
    );
  }

  /**
   * What a compat attempt may do with its worker token: report to its own waiting request. Checked
   * like a Task attempt's token: one per attempt, hashed, void once the attempt has ended.
   */
  reporter(token: string, attemptId: string): { progress(note: string): void; finish(outcome: CompatOutcome): void } {
    const waiting = this.byTokenHash.get(sha256Hex(token));
    if (!waiting) throw new OrkaError("unauthenticated", "invalid token");
    if (waiting.attemptId !== attemptId) throw new OrkaError("permission_denied", `token is not valid for compat attempt ${attemptId}`);
    return {
      progress: (note) => {
        if (!waiting.settled) waiting.onProgress?.(note);
      },
      finish: (outcome) => {
        if (waiting.settled) throw new OrkaError("conflict", `compat attempt ${attemptId} has already ended its request`);
        waiting.settle(outcome);
      },
    };
  }

  /** The attempt is over: its token is void, its directories go, and a request still waiting learns why. */
  private exited(exit: AttemptExit): void {
    const waiting = this.waiting.get(exit.attemptId);
    if (!waiting) return;
    this.waiting.delete(exit.attemptId);
    this.byTokenHash.delete(waiting.tokenHash);
    if (!waiting.settled) waiting.settle({ error: { message: `the worker running this request ended without an answer: ${exit.reason ?? `exit code ${exit.exitCode}`}` } });
    // Removing is forced; one that still fails (a broken disk) has nobody left to tell.
    void this.settings.runner.cleanup(exit.attemptId).catch(() => undefined);
  }
}
