// The durable writes of one run of the benchmark's loop, made straight through Orka's SQLite stores with no
// controller, API or checks above them: what bench/floor.ts times alone and bench/bare-loop.ts serves.
import { API_VERSION, type Resource } from "../src/resources/meta.ts";
import type { TaskStatus } from "../src/resources/task.ts";
import type { ExecutionEventInput } from "../src/store/data-store.ts";
import { stepOwnerOf, toolResultStep, type StepInput, type StepOwner } from "../src/store/journal-store.ts";
import { sha256Hex } from "../src/util/hash.ts";
import type { openBareStores } from "./stores.ts";

type Stores = Pick<ReturnType<typeof openBareStores>, "resources" | "data" | "journal">;
/** A Task as the bare writes store it: its spec is what a create gives, nothing filled in. */
type Task = Resource<{ type: string; agentRef: { name: string }; prompt: string }, TaskStatus>;
type Message = Record<string, unknown>;

export const event = (type: string, summary: string, content?: string): ExecutionEventInput => ({ type, summary, ...(content ? { content } : {}) });

/** The route a custom HTTP Tool's call is recorded under in the effect ledger. */
const TOOL_ROUTE = "/internal/v1/tools/:ns/:task/:name";

/**
 * One Task's writes, in the transactions Orka makes them: created Pending with its event; its attempt
 * and Running; each journal step with the events since the last write; a tool call's answer and start
 * in the effect ledger as one write, its reply with its result step as another; the final answer with
 * the result; the end.
 */
export class RunWrites {
  private readonly stores: Stores;
  private task: Task;
  /** Known once the attempt is recorded (`start`). */
  private attempt?: { id: string; owner: StepOwner };
  private seq = 0;

  private constructor(stores: Stores, task: Task) {
    this.stores = stores;
    this.task = task;
  }

  /** The Task created Pending, with its event. */
  static async create(stores: Stores, name: string, prompt: string): Promise<RunWrites> {
    const task = await stores.resources.create({
      apiVersion: API_VERSION,
      kind: "Task",
      metadata: { name, namespace: "default", finalizers: ["orka.ai/cleanup"], labels: { "orka.ai/agent": "loop" } },
      spec: { type: "ai", agentRef: { name: "loop" }, prompt },
      status: { phase: "Pending" } as TaskStatus,
    });
    stores.data.appendEvent("default", name, event("TaskCreated", `task ${name} created`));
    return new RunWrites(stores, task);
  }

  get current(): Task {
    return this.task;
  }

  private get name(): string {
    return this.task.metadata.name;
  }

  /** Its attempt recorded, the Task Running, and the attempt's event. */
  async start(): Promise<void> {
    const { data, resources } = this.stores;
    const attempt = data.createAttempt({ id: `${this.name}-1`, namespace: "default", task: this.name, taskUid: this.task.metadata.uid!, number: 1, allowedTools: ["noop"] }, sha256Hex(this.name));
    this.attempt = { id: attempt.id, owner: stepOwnerOf(attempt) };
    this.task = await resources.updateStatus({ ...this.task, status: { phase: "Running", attempts: 1, jobName: attempt.id, startTime: new Date().toISOString() } });
    data.appendEvent("default", this.name, event("AttemptStarted", "attempt 1 started"));
  }

  /** A journal step, with the events since the last write and `alongside` (more writes of the same transaction). */
  step(kind: StepInput["kind"], messages: Message[], detail: Message, events: ExecutionEventInput[], alongside: () => void = () => undefined): void {
    this.stores.data.appendEventsWith("default", this.name, events, () => {
      this.stores.journal.append(this.attempt!.owner, { run: 1, seq: ++this.seq, kind, messages, detail });
      alongside();
    });
  }

  /** The model's answer asking for a tool call, written with the call's start in the effect ledger; answers the call's ledger key. */
  callStarted(answer: Message, callIndex: number, events: ExecutionEventInput[]): string {
    const key = `${this.task.metadata.uid}:${sha256Hex(`${this.name}${callIndex}`)}`;
    this.step("response", [answer], {}, events, () => this.stores.journal.beginEffect({ namespace: "default", task: this.name }, key, TOOL_ROUTE));
    return key;
  }

  /** The call's reply recorded in the ledger, with its result step. */
  callFinished(key: string, toolCallId: string, result: string): void {
    const reply = JSON.stringify({ status: 200, body: JSON.stringify({ result, journalled: true }) });
    this.stores.journal.finishEffect(key, reply, { owner: this.attempt!.owner, step: toolResultStep({ run: 1, seq: ++this.seq, toolCallId }, "noop", result) });
  }

  /** The final answer, and the Task's result in the same transaction. */
  finalAnswer(text: string, events: ExecutionEventInput[]): void {
    this.step("response", [{ role: "assistant", content: text }], {}, events, () => this.stores.data.putResult("default", this.name, text));
  }

  /** The attempt ended and the Task Succeeded, or Failed with `failure`, with its event. */
  async end(failure?: string): Promise<void> {
    const { data, resources } = this.stores;
    data.finishAttempt(this.attempt!.id, failure === undefined ? { state: "succeeded", exitCode: 0 } : { state: "failed", exitCode: 1, reason: failure });
    const phase = failure === undefined ? "Succeeded" : "Failed";
    this.task = await resources.updateStatus({ ...this.task, status: { ...this.task.status, phase, completionTime: new Date().toISOString() } });
    data.appendEvent("default", this.name, failure === undefined ? event("TaskSucceeded", "attempt succeeded") : event("TaskFailed", failure));
  }
}
