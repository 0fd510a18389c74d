import { randomUUID } from "node:crypto";
import { OrkaError } from "../../util/errors.ts";
import type {
  Memory,
  MemoryProposal,
  MemoryStore,
  NewMemory,
  NewProposal,
  ProposalFilter,
  RecallFilter,
  TranscriptMessage,
  TranscriptSearch,
  TranscriptSearchResult,
} from "../memory-store.ts";
import { inTransaction, prepared, preparedWrite, type Db } from "./db.ts";
import { recallMemoryRows } from "./memory-recall.ts";
import { packTags, tagsLine, unpackTags } from "./memory-tags.ts";
import { likeEscape } from "./term-search.ts";
import { findTranscriptMatches } from "./transcript-search.ts";

type Row = Record<string, unknown>;
const now = () => new Date().toISOString();

function toMemory(row: Row): Memory {
  return prune({
    id: row.id as string,
    namespace: row.namespace as string,
    sessionName: row.session_name,
    agentName: row.agent_name,
    taskName: row.task_name,
    parentTask: row.parent_task,
    source: row.source as string,
    sourceProposalId: row.source_proposal_id,
    content: row.content as string,
    tags: unpackTags(row.tags),
    disabled: row.disabled === 1,
    deleted: row.deleted === 1,
    createdAt: row.created_at as string,
    updatedAt: row.updated_at as string,
    lastRecalledAt: row.last_recalled_at,
    recalledCount: row.recalled_count as number,
  }) as unknown as Memory;
}

function toProposal(row: Row): MemoryProposal {
  return prune({
    id: row.id,
    namespace: row.namespace,
    taskName: row.task_name,
    agentName: row.agent_name,
    type: row.type,
    skillName: row.skill_name,
    title: row.title,
    description: row.description,
    content: row.content,
    patch: row.patch,
    status: row.status,
    reviewer: row.reviewer,
    reviewNote: row.review_note,
    appliedMemoryId: row.applied_memory_id,
    appliedBy: row.applied_by,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    reviewedAt: row.reviewed_at,
    appliedAt: row.applied_at,
  }) as unknown as MemoryProposal;
}

/** Empty optional fields are omitted. */
function prune(record: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(record).filter(([, v]) => v !== null && v !== undefined && v !== ""));
}

export class SqliteMemoryStore implements MemoryStore {
  private readonly db: Db;

  constructor(db: Db) {
    this.db = db;
  }

  recall(namespace: string, filter: RecallFilter): Memory[] {
    return recallMemoryRows(this.db, namespace, filter).map(toMemory);
  }

  getMemory(namespace: string, id: string): Memory | undefined {
    const row = prepared<[string, string], Row>(this.db, "SELECT * FROM memories WHERE namespace = ? AND id = ?").get(namespace, id);
    return row && toMemory(row);
  }

  createMemory(namespace: string, memory: NewMemory & { sourceProposalId?: string }): Memory {
    const id = `mem-${randomUUID()}`;
    const at = now();
    preparedWrite(
      this.db,
      `INSERT INTO memories (id, namespace, session_name, agent_name, task_name, parent_task, source, source_proposal_id, content, tags, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(id, namespace, memory.sessionName ?? null, memory.agentName ?? null, memory.taskName ?? null, memory.parentTask ?? null, memory.source, memory.sourceProposalId ?? null, memory.content, packTags(memory.tags), at, at);
    return this.getMemory(namespace, id)!;
  }

  updateMemory(namespace: string, id: string, change: Parameters<MemoryStore["updateMemory"]>[2]): Memory {
    const current = this.getMemory(namespace, id);
    if (!current || current.deleted) throw new OrkaError("not_found", "memory not found");
    inTransaction(this.db, () => {
      prepared(
        this.db,
        `UPDATE memories SET content = ?, tags = ?, agent_name = ?, task_name = ?, source = ?, disabled = ?, deleted = ?, updated_at = ? WHERE namespace = ? AND id = ?`,
      ).run(
        change.content || current.content,
        change.tags?.length ? packTags(change.tags) : packTags(current.tags),
        change.agentName || current.agentName || null,
        change.taskName || current.taskName || null,
        change.source || current.source,
        change.disabled || current.disabled ? 1 : 0,
        change.deleted || current.deleted ? 1 : 0,
        now(),
        namespace,
        id,
      );
      this.moveToNewest(namespace, id);
    });
    return this.getMemory(namespace, id)!;
  }

  /**
   * Gives an updated memory a new rowid, so rowid order is updatedAt order: recall can then walk
   * the FTS index newest first and stop at its limit.
   */
  private moveToNewest(namespace: string, id: string): void {
    const row = prepared<[string, string], Row>(this.db, "SELECT * FROM memories WHERE namespace = ? AND id = ?").get(namespace, id);
    if (!row) return;
    prepared(this.db, "DELETE FROM memories WHERE namespace = ? AND id = ?").run(namespace, id);
    const columns = Object.keys(row);
    prepared(this.db, `INSERT INTO memories (${columns.join(", ")}) VALUES (${columns.map(() => "?").join(", ")})`).run(...columns.map((c) => row[c]));
  }

  setMemoryDisabled(namespace: string, id: string, disabled: boolean): void {
    inTransaction(this.db, () => {
      const result = prepared(this.db, "UPDATE memories SET disabled = ?, updated_at = ? WHERE namespace = ? AND id = ? AND deleted = 0").run(disabled ? 1 : 0, now(), namespace, id);
      if (result.changes === 0) throw new OrkaError("not_found", "memory not found");
      this.moveToNewest(namespace, id);
    });
  }

  markRecalled(namespace: string, ids: string[]): void {
    const statement = prepared(this.db, "UPDATE memories SET last_recalled_at = ?, recalled_count = recalled_count + 1 WHERE namespace = ? AND id = ?");
    const at = now();
    inTransaction(this.db, () => ids.forEach((id) => statement.run(at, namespace, id)));
  }

  createProposal(namespace: string, proposal: NewProposal): MemoryProposal {
    const id = `mprop-${randomUUID()}`;
    const at = now();
    preparedWrite(
      this.db,
      `INSERT INTO memory_proposals (id, namespace, task_name, agent_name, type, skill_name, title, description, content, patch, status, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?)`,
    ).run(id, namespace, proposal.taskName ?? null, proposal.agentName ?? null, proposal.type.toLowerCase(), proposal.skillName ?? null, proposal.title, proposal.description ?? null, proposal.content ?? null, proposal.patch ?? null, at, at);
    return this.getProposal(namespace, id)!;
  }

  getProposal(namespace: string, id: string): MemoryProposal | undefined {
    const row = prepared<[string, string], Row>(this.db, "SELECT * FROM memory_proposals WHERE namespace = ? AND id = ?").get(namespace, id);
    return row && toProposal(row);
  }

  listProposals(namespace: string, filter: ProposalFilter): MemoryProposal[] {
    const where = ["namespace = +?"];
    const params: unknown[] = [namespace];
    for (const [column, value] of [["task_name", filter.taskName], ["agent_name", filter.agentName], ["type", filter.type?.toLowerCase()], ["status", filter.status]] as const) {
      if (value) {
        where.push(`${column} = +?`);
        params.push(value);
      }
    }
    if (filter.query) {
      where.push("(lower(title) LIKE ? ESCAPE '\\' OR lower(coalesce(description, '')) LIKE ? ESCAPE '\\' OR lower(coalesce(content, '')) LIKE ? ESCAPE '\\')");
      params.push(likeEscape(filter.query), likeEscape(filter.query), likeEscape(filter.query));
    }
    params.push(filter.limit);
    return prepared<unknown[], Row>(this.db, `SELECT * FROM memory_proposals WHERE ${where.join(" AND ")} ORDER BY created_at DESC, id DESC LIMIT +?`).all(...params).map(toProposal);
  }

  reviewProposal(namespace: string, id: string, review: { status: string; reviewer: string; reviewNote?: string }): void {
    if (!review.status) throw new OrkaError("invalid_argument", "status is required");
    if (review.status !== "accepted" && review.status !== "rejected") throw new OrkaError("invalid_argument", "proposal review status must be accepted or rejected");
    inTransaction(this.db, () => {
      const proposal = this.requireProposal(namespace, id);
      if (proposal.status !== "pending") throw new OrkaError("invalid_argument", `proposal status "${proposal.status}" cannot be reviewed`);
      const at = now();
      prepared(this.db, "UPDATE memory_proposals SET status = ?, reviewer = ?, review_note = ?, reviewed_at = ?, updated_at = ? WHERE namespace = ? AND id = ? AND status = 'pending'")
        .run(review.status, review.reviewer, review.reviewNote ?? null, at, at, namespace, id);
    });
  }

  applyProposal(namespace: string, id: string, appliedBy: string): Memory {
    return inTransaction(this.db, () => {
      const proposal = this.requireProposal(namespace, id);
      if (proposal.status === "applied" && proposal.appliedMemoryId) return this.getMemory(namespace, proposal.appliedMemoryId)!;
      if (proposal.type !== "memory") throw new OrkaError("invalid_argument", `proposal type "${proposal.type}" cannot be applied as memory`);
      if (proposal.status !== "accepted") throw new OrkaError("invalid_argument", `proposal status "${proposal.status}" cannot be applied`);
      if (!proposal.content?.trim()) throw new OrkaError("invalid_argument", "content is required");
      const memory = this.createMemory(namespace, {
        content: proposal.content,
        source: "memory_proposal",
        sourceProposalId: proposal.id,
        agentName: proposal.agentName,
        taskName: proposal.taskName,
        tags: tagsLine(proposal.description),
      });
      const at = now();
      prepared(this.db, "UPDATE memory_proposals SET status = 'applied', applied_memory_id = ?, applied_by = ?, applied_at = ?, updated_at = ? WHERE namespace = ? AND id = ?")
        .run(memory.id, appliedBy, at, at, namespace, id);
      return memory;
    });
  }

  archiveProposal(namespace: string, id: string): void {
    inTransaction(this.db, () => {
      const proposal = this.requireProposal(namespace, id);
      if (proposal.status === "applied") throw new OrkaError("invalid_argument", "applied proposal cannot be archived");
      if (proposal.status === "archived") return;
      prepared(this.db, "UPDATE memory_proposals SET status = 'archived', updated_at = ? WHERE namespace = ? AND id = ?").run(now(), namespace, id);
    });
  }

  ensureSession(namespace: string, name: string): void {
    preparedWrite(this.db, "INSERT OR IGNORE INTO sessions (namespace, name, created_at) VALUES (?, ?, ?)").run(namespace, name, now());
  }

  sessionExists(namespace: string, name: string): boolean {
    return prepared(this.db, "SELECT 1 FROM sessions WHERE namespace = ? AND name = ?").get(namespace, name) !== undefined;
  }

  lockSession(namespace: string, name: string, task: string): boolean {
    const result = preparedWrite(this.db, "UPDATE sessions SET lock_task = ? WHERE namespace = ? AND name = ? AND (lock_task IS NULL OR lock_task = ?)")
      .run(task, namespace, name, task);
    return result.changes > 0;
  }

  unlockSession(namespace: string, name: string, task: string): void {
    preparedWrite(this.db, "UPDATE sessions SET lock_task = NULL WHERE namespace = ? AND name = ? AND lock_task = ?").run(namespace, name, task);
  }

  appendTranscript(namespace: string, session: string, message: { role: string; name?: string; content: string; taskName?: string }): TranscriptMessage {
    const createdAt = now();
    const { id } = preparedWrite<{ id: number }>(
      this.db,
      "INSERT INTO transcript_messages (namespace, session_name, role, name, content, task_name, created_at) VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id",
    ).get(namespace, session, message.role, message.name ?? null, message.content, message.taskName ?? null, createdAt)!;
    return { id, sessionName: session, role: message.role, ...(message.name ? { name: message.name } : {}), content: message.content, createdAt };
  }

  transcript(namespace: string, session: string, limit: number): TranscriptMessage[] {
    return prepared<[string, string, number], Row>(this.db, "SELECT * FROM transcript_messages WHERE namespace = +? AND session_name = +? ORDER BY id DESC LIMIT +?")
      .all(namespace, session, limit)
      .reverse()
      .map((row) => ({ id: row.id as number, sessionName: session, role: row.role as string, ...(row.name ? { name: row.name as string } : {}), content: row.content as string, createdAt: row.created_at as string }));
  }

  listSessions(namespace: string) {
    return prepared<[string], { name: string; messages: number; lock_task: string | null; created_at: string }>(
      this.db,
      `SELECT s.name, s.lock_task, s.created_at, (SELECT count(*) FROM transcript_messages t WHERE t.namespace = s.namespace AND t.session_name = s.name) AS messages
       FROM sessions s WHERE s.namespace = +? ORDER BY s.name`,
    ).all(namespace)
      .map((r) => ({ name: r.name, messages: r.messages, ...(r.lock_task ? { lockedBy: r.lock_task } : {}), createdAt: r.created_at }));
  }

  searchTranscripts(namespace: string, search: TranscriptSearch): TranscriptSearchResult[] {
    return findTranscriptMatches(this.db, namespace, search);
  }

  private requireProposal(namespace: string, id: string): MemoryProposal {
    const proposal = this.getProposal(namespace, id);
    if (!proposal) throw new OrkaError("not_found", "memory proposal not found");
    return proposal;
  }
}
