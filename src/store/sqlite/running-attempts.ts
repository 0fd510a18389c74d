import type { Attempt } from "../data-store.ts";

/**
 * Running attempts as read by their token, kept in memory: every worker request looks its attempt up
 * (up to three times: the input scrub, the effect ledger and the route), and only this process writes
 * the attempts table, so an entry stays true until the store itself changes that attempt. Entries are
 * frozen: they are shared by every caller.
 */
export class RunningAttemptCache {
  private readonly byToken = new Map<string, Attempt>();
  private readonly tokenOf = new Map<string, string>();

  get(tokenHash: string): Attempt | undefined {
    return this.byToken.get(tokenHash);
  }

  /** Keeps `attempt` when it is running; a finished attempt is read from the store each time. */
  remember(tokenHash: string, attempt: Attempt): Attempt {
    if (attempt.state !== "running") return attempt;
    const frozen = Object.freeze({
      ...attempt,
      allowedTools: Object.freeze([...attempt.allowedTools]) as string[],
      ...(attempt.sessionTools ? { sessionTools: Object.freeze(attempt.sessionTools.map((tool) => Object.freeze(tool))) as Attempt["sessionTools"] } : {}),
    });
    this.byToken.set(tokenHash, frozen);
    this.tokenOf.set(attempt.id, tokenHash);
    return frozen;
  }

  forget(attemptId: string): void {
    const tokenHash = this.tokenOf.get(attemptId);
    if (tokenHash === undefined) return;
    this.byToken.delete(tokenHash);
    this.tokenOf.delete(attemptId);
  }

  forgetTask(namespace: string, task: string): void {
    for (const attempt of this.byToken.values()) if (attempt.namespace === namespace && attempt.task === task) this.forget(attempt.id);
  }
}
