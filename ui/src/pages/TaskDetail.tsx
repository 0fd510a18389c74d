import { stringify } from "yaml";
import { useApi } from "../api-context.ts";
import { ActionButton, Card, Empty, ErrorNote, JsonText, PhaseBadge, Pre, Show, Time } from "../components.tsx";
import { useApiGet, useStreamedItems } from "../hooks.ts";
import { Link, navigate } from "../router.tsx";
import { TERMINAL, type Delivery, type ExecutionEvent, type List, type Task } from "../types.ts";

export function TaskDetail({ name }: { name: string }) {
  const api = useApi();
  const path = `tasks/${encodeURIComponent(name)}`;
  const task = useApiGet<Task>(path, {}, { pollMs: 1500 });
  const done = TERMINAL.includes(task.data?.status?.phase ?? "");

  return (
    <div className="page">
      <p className="crumbs">
        <Link to="/tasks">Tasks</Link> / {name}
      </p>
      <Show loaded={task} what="the task">
        {(t) => (
          <>
            <div className="page-head">
              <h1>
                {t.metadata.name} <PhaseBadge phase={t.status?.phase} />
              </h1>
              <div className="buttons">
                {!done && (
                  <ActionButton kind="plain" onAction={() => api.post(`${path}/cancel`, { reason: "cancelled from the dashboard" }).then(task.reload)}>
                    Cancel
                  </ActionButton>
                )}
                <ActionButton kind="danger" confirm={`Delete task ${name} and everything it owns?`} onAction={() => api.delete(path).then(() => navigate("/tasks"))}>
                  Delete
                </ActionButton>
              </div>
            </div>
            <StatusCard task={t} />
            {t.spec.workspace?.gitRepo && <WorkspaceCard task={t} />}
            {t.status?.message?.startsWith("waiting for approval") && (
              <p className="banner">
                This task is waiting for a person: <Link to="/approvals">review its approval</Link>.
              </p>
            )}
            <div className="columns">
              <div>
                <Timeline path={path} />
              </div>
              <div>
                <ResultCard path={path} done={done} available={t.status?.resultRef?.available === true} />
                <Card title="Delegation tree">
                  <Tree name={name} />
                </Card>
                <Artifacts path={path} />
                <Logs path={path} started={(t.status?.attempts ?? 0) > 0} />
                <Card title="Spec">
                  <Pre text={stringify({ metadata: { labels: t.metadata.labels, annotations: t.metadata.annotations }, spec: t.spec })} />
                </Card>
              </div>
            </div>
          </>
        )}
      </Show>
    </div>
  );
}

function StatusCard({ task }: { task: Task }) {
  const s = task.status ?? {};
  return (
    <Card title="Status">
      <dl className="facts">
        <dt>Type</dt>
        <dd>{task.spec.type}</dd>
        <dt>Agent</dt>
        <dd>{task.spec.agentRef?.name ?? "—"}</dd>
        <dt>Message</dt>
        <dd className="message">{s.message ?? "—"}</dd>
        <dt>Attempts</dt>
        <dd>{s.attempts ?? 0}</dd>
        <dt>Started</dt>
        <dd>
          <Time at={s.startTime} />
        </dd>
        <dt>Finished</dt>
        <dd>
          <Time at={s.completionTime} />
        </dd>
        {task.spec.requestedBy && (
          <>
            <dt>Requested by</dt>
            <dd>{task.spec.requestedBy.username}</dd>
          </>
        )}
      </dl>
    </Card>
  );
}

/** The repository the Task works in, as frozen, and what Orka verified of its delivery. */
function WorkspaceCard({ task }: { task: Task }) {
  const spec = task.spec.workspace ?? {};
  const frozen = task.status?.workspace;
  const delivery = task.status?.delivery;
  return (
    <Card title="Workspace">
      <dl className="facts workspace-facts">
        <dt>Repository</dt>
        <dd>
          <a href={frozen?.repository ?? spec.gitRepo} rel="noreferrer" target="_blank">
            {frozen?.repository ?? spec.gitRepo}
          </a>
        </dd>
        <dt>{spec.ref ? "Ref" : "Branch"}</dt>
        <dd>{spec.ref ?? frozen?.branch ?? spec.branch ?? "default branch (not resolved yet)"}</dd>
        <dt>Base commit</dt>
        <dd>{frozen ? <Sha sha={frozen.baseSHA} /> : "—"}</dd>
        <dt>Intent</dt>
        <dd>{spec.intent ?? "read"}</dd>
        {delivery && <DeliveryFacts delivery={delivery} />}
      </dl>
    </Card>
  );
}

function DeliveryFacts({ delivery }: { delivery: Delivery }) {
  const verified = delivery.outcome === "VerifiedExact";
  return (
    <>
      <dt>Delivery</dt>
      <dd>
        <span className={`badge delivery ${verified || delivery.outcome === "NoChange" || delivery.outcome === "ReadValidated" ? "outcome completed" : delivery.outcome ? "outcome failed" : "outcome running"}`}>
          {delivery.outcome ?? delivery.state}
        </span>
        {delivery.message && <span className="muted"> {delivery.message}</span>}
      </dd>
      {delivery.branch && (
        <>
          <dt>Published to</dt>
          <dd>{delivery.branch}</dd>
        </>
      )}
      {delivery.verifiedRemoteSHA && (
        <>
          <dt>Verified commit</dt>
          <dd>
            <Sha sha={delivery.verifiedRemoteSHA} /> <Time at={delivery.verifiedAt} />
          </dd>
        </>
      )}
      {delivery.prReceipt && (
        <>
          <dt>Pull request</dt>
          <dd>
            <a href={delivery.prReceipt.url} rel="noreferrer" target="_blank">
              #{delivery.prReceipt.number}
            </a>{" "}
            <span className="muted">{delivery.prReceipt.state}</span>
          </dd>
        </>
      )}
    </>
  );
}

/** A commit by its short id; the full one on hover. */
function Sha({ sha }: { sha: string }) {
  return (
    <code className="sha" title={sha}>
      {sha.slice(0, 12)}
    </code>
  );
}

/** Asked for only once the Task says it has one, so a running Task does not poll into 404s. */
function ResultCard({ path, done, available }: { path: string; done: boolean; available: boolean }) {
  const result = useApiGet<{ result: string }>(`${path}/result`, {}, { enabled: available });
  const none = <Empty>{done ? "This task left no result." : "No result yet."}</Empty>;
  return (
    <Card title="Result">
      {available ? (
        <Show loaded={result} what="the result">
          {({ result: text }) => (text ? <Pre text={text} className="result" /> : none)}
        </Show>
      ) : (
        none
      )}
    </Card>
  );
}

/** One row per event; a tool call's start and end become one expandable row with arguments and result. */
interface ToolCallRow {
  kind: "tool";
  id: string;
  name: string;
  started: ExecutionEvent;
  ended?: ExecutionEvent;
}
type Row = { kind: "event"; event: ExecutionEvent } | ToolCallRow;

function rowsOf(events: ExecutionEvent[]): Row[] {
  const rows: Row[] = [];
  const calls = new Map<string, ToolCallRow>();
  for (const event of events) {
    const key = event.toolCallID ? `${event.toolCallID}/${event.toolName}` : undefined;
    if (key && event.type === "ToolCallStarted") {
      const row: ToolCallRow = { kind: "tool", id: key, name: event.toolName ?? "tool", started: event };
      calls.set(key, row);
      rows.push(row);
    } else if (key && calls.has(key) && /^ToolCall(Completed|Failed|Rejected)$/.test(event.type)) calls.get(key)!.ended = event;
    else rows.push({ kind: "event", event });
  }
  return rows;
}

/** One Task's events; a reconnection asks only for those after the last one shown. */
function Timeline({ path }: { path: string }) {
  const { items: events, state, error, reconnect } = useStreamedItems<ExecutionEvent>(`${path}/stream`, "execution_event", "stream_complete");

  return (
    <Card
      title={
        <>
          Timeline <span className={`live ${state}`}>{state === "live" ? "● live" : state === "complete" ? "complete" : "disconnected"}</span>
        </>
      }
      actions={state === "error" ? <button className="button plain" onClick={reconnect}>Reconnect now</button> : undefined}
    >
      {error && <ErrorNote message={`The event stream stopped: ${error}`} />}
      {events.length === 0 ? (
        <Empty>{state === "live" ? "Waiting for the first event…" : "No events were recorded."}</Empty>
      ) : (
        <ol className="timeline">
          {rowsOf(events).map((row) => (row.kind === "tool" ? <ToolCall key={row.id} row={row} /> : <EventRow key={row.event.seq} event={row.event} />))}
        </ol>
      )}
    </Card>
  );
}

/** The journal step an event happened at: `orka task fork --run R --at S` continues a run from there. */
function JournalStep({ event }: { event: ExecutionEvent }) {
  if (!event.journalStep) return null;
  return (
    <span className="event-step" title={`Run ${event.journalRun}, journal step ${event.journalStep}: orka task fork <task> --run ${event.journalRun} --at ${event.journalStep} continues from here`}>
      run {event.journalRun} · step {event.journalStep}
    </span>
  );
}

function EventRow({ event }: { event: ExecutionEvent }) {
  return (
    <li className={`event severity-${event.severity}`} data-seqs={event.seq}>
      <Time at={event.createdAt} /> <JournalStep event={event} />
      <span className="event-type">{event.type}</span> <span className="event-summary">{event.summary}</span>
      {event.content && (
        <details>
          <summary>details</summary>
          <JsonText text={event.content} />
        </details>
      )}
    </li>
  );
}

function ToolCall({ row }: { row: ToolCallRow }) {
  const outcome = row.ended ? row.ended.type.replace("ToolCall", "").toLowerCase() : "running";
  return (
    <li className={`event tool-call outcome-${outcome}`} data-seqs={[row.started.seq, row.ended?.seq].filter((seq) => seq !== undefined).join(" ")}>
      <details>
        <summary>
          <Time at={row.started.createdAt} /> <JournalStep event={row.started} />
          <span className="event-type">tool</span> <strong>{row.name}</strong> <span className={`badge outcome ${outcome}`}>{outcome}</span>
          {row.ended && <span className="event-summary"> {row.ended.summary}</span>}
        </summary>
        <div className="tool-io">
          <h3>Arguments</h3>
          <JsonText text={row.started.content} />
          <h3>Result</h3>
          {row.ended ? <JsonText text={row.ended.content} /> : <span className="muted">still running…</span>}
        </div>
      </details>
    </li>
  );
}

/** A Task's children, their children, and so on, with phases updating live. */
function Tree({ name, depth = 0 }: { name: string; depth?: number }) {
  const children = useApiGet<List<Task>>(`tasks/${encodeURIComponent(name)}/children`, {}, { pollMs: 1500 });
  if (depth > 8) return null;
  if (children.data === undefined) return depth === 0 ? <Show loaded={children} what="children">{() => null}</Show> : null;
  if (children.data.items.length === 0) return depth === 0 ? <Empty>This task has not delegated anything.</Empty> : null;
  return (
    <ul className={depth === 0 ? "tree" : "subtree"}>
      {children.data.items.map((child) => (
        <li key={child.metadata.name} className="tree-node" data-task={child.metadata.name}>
          <Link to={`/tasks/${encodeURIComponent(child.metadata.name)}`}>{child.metadata.name}</Link> <PhaseBadge phase={child.status?.phase} />{" "}
          <span className="muted">{child.spec.agentRef?.name ?? child.spec.type}</span>
          <Tree name={child.metadata.name} depth={depth + 1} />
        </li>
      ))}
    </ul>
  );
}

function Artifacts({ path }: { path: string }) {
  const api = useApi();
  const artifacts = useApiGet<{ items: { file: string; size: number }[] }>(`${path}/artifacts`, {}, { pollMs: 5000 });
  return (
    <Card title="Artifacts">
      <Show loaded={artifacts} what="artifacts" empty={(d) => d.items.length === 0}>
        {({ items }) => (
          <ul className="plain-list">
            {items.map((a) => (
              <li key={a.file}>
                <button className="link" onClick={() => void api.download(`${path}/artifacts/${encodeURIComponent(a.file)}`, a.file)}>
                  {a.file}
                </button>{" "}
                <span className="muted">{a.size} bytes</span>
              </li>
            ))}
          </ul>
        )}
      </Show>
    </Card>
  );
}

function Logs({ path, started }: { path: string; started: boolean }) {
  // A Task that has not started has no logs yet: the 404 of that moment reads as "no output".
  const logs = useApiGet<{ logs: string }>(`${path}/logs`, {}, { pollMs: 3000, enabled: started, missing: { logs: "" } });
  const none = <Empty>No log output.</Empty>;
  return (
    <Card title="Logs">
      {started ? (
        <Show loaded={logs} what="logs">
          {({ logs: text }) => (text ? <Pre text={text} className="logs" /> : none)}
        </Show>
      ) : (
        none
      )}
    </Card>
  );
}
