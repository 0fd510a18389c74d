import type { CoordinationStore, Message, Plan } from "../coordination-store.ts";
import { inTransaction, prepared, preparedWrite, type Db } from "./db.ts";

type Row = Record<string, unknown>;
const now = () => new Date().toISOString();

function toPlan(row: Row): Plan {
  return {
    namespace: row.namespace as string,
    task: row.task as string,
    iteration: row.iteration as number,
    summary: row.summary as string,
    progressPct: row.progress_pct as number,
    goalComplete: row.goal_complete === 1,
    planDocument: row.plan_document as string,
    createdAt: row.created_at as string,
    updatedAt: row.updated_at as string,
  };
}

export class SqliteCoordinationStore implements CoordinationStore {
  private readonly db: Db;

  constructor(db: Db) {
    this.db = db;
  }

  putPlan(plan: Omit<Plan, "createdAt" | "updatedAt">): Plan {
    const at = now();
    preparedWrite(
      this.db,
      `INSERT INTO plans (namespace, task, iteration, summary, progress_pct, goal_complete, plan_document, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (namespace, task) DO UPDATE SET iteration = excluded.iteration, summary = excluded.summary,
         progress_pct = excluded.progress_pct, goal_complete = excluded.goal_complete, plan_document = excluded.plan_document,
         updated_at = excluded.updated_at`,
    ).run(plan.namespace, plan.task, plan.iteration, plan.summary, plan.progressPct, plan.goalComplete ? 1 : 0, plan.planDocument, at, at);
    return this.getPlan(plan.namespace, plan.task)!;
  }

  getPlan(namespace: string, task: string): Plan | undefined {
    const row = prepared<[string, string], Row>(this.db, "SELECT * FROM plans WHERE namespace = ? AND task = ?").get(namespace, task);
    return row && toPlan(row);
  }

  deletePlan(namespace: string, task: string): void {
    preparedWrite(this.db, "DELETE FROM plans WHERE namespace = ? AND task = ?").run(namespace, task);
  }

  sendMessage(message: Pick<Message, "namespace" | "fromTask" | "toTask" | "parentTask" | "content">): Message {
    const createdAt = now();
    const { id } = preparedWrite<{ id: number }>(
      this.db,
      "INSERT INTO messages (namespace, parent_task, from_task, to_task, content, created_at) VALUES (?, ?, ?, ?, ?, ?) RETURNING id",
    ).get(message.namespace, message.parentTask, message.fromTask, message.toTask, message.content, createdAt)!;
    return { id, ...message, read: false, createdAt };
  }

  readMessages(namespace: string, parentTask: string, reader: string, markRead: boolean): Message[] {
    return inTransaction(this.db, () => {
      const rows = prepared<[string, string, string, string, string], Row>(
        this.db,
        `SELECT * FROM messages m WHERE m.namespace = +? AND m.parent_task = +? AND m.from_task != ? AND m.to_task IN (?, '*')
         AND NOT EXISTS (SELECT 1 FROM message_reads r WHERE r.message_id = m.id AND r.reader = ?) ORDER BY m.id`,
      ).all(namespace, parentTask, reader, reader, reader);
      if (markRead) {
        const mark = prepared(this.db, "INSERT OR IGNORE INTO message_reads (message_id, reader) VALUES (?, ?)");
        for (const row of rows) mark.run(row.id, reader);
      }
      return rows.map((row) => ({
        id: row.id as number,
        namespace,
        fromTask: row.from_task as string,
        toTask: row.to_task as string,
        parentTask,
        content: row.content as string,
        read: markRead,
        createdAt: row.created_at as string,
      }));
    });
  }

  deleteMessagesOf(namespace: string, task: string): void {
    preparedWrite(this.db, "DELETE FROM messages WHERE namespace = ? AND (from_task = ? OR to_task = ? OR parent_task = ?)").run(namespace, task, task, task);
  }
}
