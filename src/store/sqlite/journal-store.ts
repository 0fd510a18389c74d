import { canonicalJson, sha256Hex } from "../../util/hash.ts";
import { OrkaError } from "../../util/errors.ts";
import type { Effect, EffectState, JournalStep, JournalStore, StepInput, StepKind, StepOwner } from "../journal-store.ts";
import { deleteTaskRows, inTransaction, prepared, preparedWrite, type Db } from "./db.ts";


export class SqliteJournalStore implements JournalStore {
  private readonly db: Db;

  constructor(db: Db) {
    this.db = db;
  }

  append(owner: StepOwner, step: StepInput): { storedBytes: number } {
    return inTransaction(this.db, () => {
      const bodies = step.messages.map((message) => canonicalJson(message));
      const hashes = bodies.map(sha256Hex);
      const segments = JSON.stringify(hashes);
      const detail = canonicalJson(step.detail);
      const { taken, follows } = this.place(owner.taskUid, step.run, step.seq);
      if (taken) {
        // A step sent again (its reply was lost): the same step is a no-op, another one a conflict.
        const written = prepared<[string, number, number], { kind: string; segments: string; detail: string }>(this.db, "SELECT kind, segments, detail FROM journal_steps WHERE task_uid = ? AND run = ? AND seq = ?")
          .get(owner.taskUid, step.run, step.seq)!;
        if (written.kind === step.kind && written.segments === segments && written.detail === detail) return { storedBytes: 0 };
        throw alreadyWritten(step.run, step.seq);
      }
      if (!follows) throw this.doesNotFollow(owner.taskUid, step.run, step.seq);
      const insertSegment = prepared(this.db, "INSERT OR IGNORE INTO journal_segments (namespace, task, hash, body) VALUES (?, ?, ?, ?)");
      let storedBytes = detail.length;
      bodies.forEach((body, i) => {
        if (insertSegment.run(owner.namespace, owner.task, hashes[i], body).changes > 0) storedBytes += body.length;
      });
      prepared(this.db, "INSERT INTO journal_steps (namespace, task, task_uid, run, seq, kind, segments, detail, attempt, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
        .run(owner.namespace, owner.task, owner.taskUid, step.run, step.seq, step.kind, segments, detail, owner.attempt, new Date().toISOString());
      return { storedBytes };
    });
  }

  checkNextStep(taskUid: string, run: number, seq: number): void {
    const { taken, follows } = this.place(taskUid, run, seq);
    if (taken) throw alreadyWritten(run, seq);
    if (!follows) throw this.doesNotFollow(taskUid, run, seq);
  }

  /**
   * Whether step `seq` of a run is written, and whether it would follow the run's last step. Steps are
   * written in order, so it follows when step `seq - 1` is written. One lookup of both positions in the
   * key's index, without reading the steps themselves, costs less than asking for the highest step.
   */
  private place(taskUid: string, run: number, seq: number): { taken: boolean; follows: boolean } {
    if (!Number.isInteger(seq) || seq < 1) throw new OrkaError("invalid_argument", `journal step ${seq} is not a step number: steps are numbered from 1`);
    // A range of the two positions reads the index once (an IN list builds a table of its values first).
    const written = prepared<[string, number, number, number], number>(this.db, "SELECT seq FROM journal_steps WHERE task_uid = ? AND run = ? AND seq BETWEEN ? AND ?")
      .pluck()
      .all(taskUid, run, seq - 1, seq);
    return { taken: written.includes(seq), follows: seq === 1 || written.includes(seq - 1) };
  }

  private doesNotFollow(taskUid: string, run: number, seq: number): OrkaError {
    return new OrkaError("conflict", `journal step ${seq} does not follow step ${this.lastSeq(taskUid, run)}`);
  }

  private lastSeq(taskUid: string, run: number): number {
    return prepared<[string, number], { seq: number | null }>(this.db, "SELECT max(seq) AS seq FROM journal_steps WHERE task_uid = +? AND run = +?").get(taskUid, run)?.seq ?? 0;
  }

  steps(taskUid: string, run: number): JournalStep[] {
    const rows = prepared<[string, number], { namespace: string; task: string; seq: number; kind: string; segments: string; detail: string; attempt: number; created_at: string }>(
      this.db,
      "SELECT namespace, task, seq, kind, segments, detail, attempt, created_at FROM journal_steps WHERE task_uid = +? AND run = +? ORDER BY seq",
    ).all(taskUid, run);
    const segment = prepared<[string, string, string], { body: string }>(this.db, "SELECT body FROM journal_segments WHERE namespace = ? AND task = ? AND hash = ?");
    return rows.map((row) => ({
      run,
      seq: row.seq,
      kind: row.kind as StepKind,
      messages: (JSON.parse(row.segments) as string[]).map((hash) => JSON.parse(segment.get(row.namespace, row.task, hash)!.body) as unknown),
      detail: JSON.parse(row.detail) as Record<string, unknown>,
      attempt: row.attempt,
      createdAt: row.created_at,
    }));
  }

  copyRun(from: { taskUid: string; run: number; upTo: number }, to: StepOwner, toRun: number): void {
    inTransaction(this.db, () => {
      const source = prepared<[string, number], { namespace: string; task: string }>(this.db, "SELECT namespace, task FROM journal_steps WHERE task_uid = ? AND run = ? LIMIT 1").get(from.taskUid, from.run);
      if (!source) return;
      prepared(
        this.db,
        `INSERT OR IGNORE INTO journal_segments (namespace, task, hash, body)
         SELECT ?, ?, g.hash, g.body FROM journal_segments g
         WHERE g.namespace = ? AND g.task = ? AND g.hash IN (SELECT j.value FROM journal_steps s, json_each(s.segments) j WHERE s.task_uid = ? AND s.run = ? AND s.seq <= ?)`,
      ).run(to.namespace, to.task, source.namespace, source.task, from.taskUid, from.run, from.upTo);
      prepared(
        this.db,
        `INSERT OR IGNORE INTO journal_steps (namespace, task, task_uid, run, seq, kind, segments, detail, attempt, created_at)
         SELECT ?, ?, ?, ?, seq, kind, segments, detail, ?, created_at FROM journal_steps WHERE task_uid = ? AND run = ? AND seq <= ?`,
      ).run(to.namespace, to.task, to.taskUid, toRun, to.attempt, from.taskUid, from.run, from.upTo);
    });
  }

  effect(key: string): Effect | undefined {
    const row = prepared<[string], { key: string; tool: string; state: string; result: string | null; payload_digest: string | null }>(this.db, "SELECT key, tool, state, result, payload_digest FROM effects WHERE key = ?")
      .get(key);
    if (!row) return undefined;
    return { key: row.key, tool: row.tool, state: row.state as EffectState, result: row.result ?? undefined, payloadDigest: row.payload_digest ?? undefined };
  }

  beginEffect(owner: { namespace: string; task: string }, key: string, tool: string, payloadDigest?: string): boolean {
    const at = new Date().toISOString();
    return (
      preparedWrite(this.db, "INSERT OR IGNORE INTO effects (key, namespace, task, tool, state, created_at, updated_at, payload_digest) VALUES (?, ?, ?, ?, 'started', ?, ?, ?)")
        .run(key, owner.namespace, owner.task, tool, at, at, payloadDigest ?? null).changes > 0
    );
  }

  finishEffect(key: string, result: string, resultStep?: { owner: StepOwner; step: StepInput }): void {
    inTransaction(this.db, () => {
      prepared(this.db, "UPDATE effects SET state = 'done', result = ?, updated_at = ? WHERE key = ?").run(result, new Date().toISOString(), key);
      if (resultStep) this.append(resultStep.owner, resultStep.step);
    });
  }

  deleteTask(namespace: string, task: string): void {
    for (const table of ["journal_steps", "journal_segments", "effects"]) deleteTaskRows(this.db, table, namespace, task);
  }
}

const alreadyWritten = (run: number, seq: number) => new OrkaError("conflict", `journal step ${seq} of run ${run} is already written`);
