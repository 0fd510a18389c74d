import type { TaskSecrets } from "../../policy/redact.ts";
import type { AttemptState, ExecutionEvent, ExecutionEventInput } from "../data-store.ts";
import type { Db } from "./db.ts";
import { SqliteTaskDataStore } from "./data-store.ts";

/**
 * Everything an attempt reports (result, events, logs, its failure reason, which becomes the Task's
 * status message) enters storage here, so this is where the Task's Secret values are scrubbed: an
 * upstream that echoes a key it was sent cannot put it anywhere a reader of the Task can see.
 */
export class RedactingTaskDataStore extends SqliteTaskDataStore {
  private readonly secrets: TaskSecrets;

  constructor(db: Db, secrets: TaskSecrets) {
    super(db);
    this.secrets = secrets;
  }

  override putResult(namespace: string, task: string, body: string): void {
    super.putResult(namespace, task, this.secrets.redact(namespace, task, body));
  }

  override appendEvent(namespace: string, task: string, input: ExecutionEventInput): ExecutionEvent {
    const scrub = (text: string) => this.secrets.redact(namespace, task, text);
    return super.appendEvent(namespace, task, { ...input, summary: scrub(input.summary), ...(input.content === undefined ? {} : { content: scrub(input.content) }) });
  }

  override appendLog(namespace: string, task: string, attempt: number, chunk: string): void {
    super.appendLog(namespace, task, attempt, this.secrets.redact(namespace, task, chunk));
  }

  override finishAttempt(id: string, outcome: { state: Exclude<AttemptState, "running">; exitCode?: number; reason?: string }): void {
    super.finishAttempt(id, outcome.reason === undefined ? outcome : { ...outcome, reason: this.secrets.redactForAttempt(id, outcome.reason) });
  }

  override deleteTaskData(namespace: string, task: string): void {
    super.deleteTaskData(namespace, task);
    this.secrets.forget(namespace, task);
  }
}
