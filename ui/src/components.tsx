import { useState, type ReactNode } from "react";
import { useTaskChanges, type Loaded } from "./hooks.ts";
import { Link } from "./router.tsx";
import type { Task } from "./types.ts";

export function PhaseBadge({ phase }: { phase?: string }) {
  const value = phase ?? "Pending";
  return <span className={`badge phase-${value.toLowerCase()}`}>{value}</span>;
}

export function Loading({ what }: { what: string }) {
  return <p className="state loading">Loading {what}…</p>;
}

export function Empty({ children }: { children: ReactNode }) {
  return <p className="state empty">{children}</p>;
}

export function ErrorNote({ message }: { message: string }) {
  return (
    <p className="state error" role="alert">
      {message}
    </p>
  );
}

/** Loading, error and empty states for one loaded value; `children` renders the data. */
export function Show<T>({ loaded, what, empty, children }: { loaded: Loaded<T>; what: string; empty?: (data: T) => boolean; children: (data: T) => ReactNode }) {
  if (loaded.data === undefined) return loaded.error ? <ErrorNote message={`Could not load ${what}: ${loaded.error}`} /> : <Loading what={what} />;
  return (
    <>
      {loaded.error && <ErrorNote message={`Showing earlier data; refreshing ${what} failed: ${loaded.error}`} />}
      {empty?.(loaded.data) ? <Empty>No {what} yet.</Empty> : children(loaded.data)}
    </>
  );
}

export function Pre({ text, className }: { text: string; className?: string }) {
  return <pre className={`pre ${className ?? ""}`}>{text}</pre>;
}

/** JSON text shown pretty when it parses, as is when it does not. */
export function JsonText({ text }: { text?: string }) {
  if (!text) return <span className="muted">(empty)</span>;
  try {
    return <Pre text={JSON.stringify(JSON.parse(text), null, 2)} />;
  } catch {
    return <Pre text={text} />;
  }
}

export function Time({ at }: { at?: string }) {
  if (!at) return <span className="muted">—</span>;
  const date = new Date(at);
  return <time dateTime={at} title={date.toISOString()}>{date.toLocaleTimeString()}</time>;
}

/** A button that runs an action, shows it is busy, and reports a failure beside it. */
export function ActionButton({ onAction, children, kind = "primary", confirm, label }: { onAction: () => Promise<unknown>; children: ReactNode; kind?: "primary" | "danger" | "plain"; confirm?: string; label?: string }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const run = async () => {
    if (confirm && !window.confirm(confirm)) return;
    setBusy(true);
    setError(undefined);
    try {
      await onAction();
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <span className="action">
      <button className={`button ${kind}`} disabled={busy} onClick={run} aria-label={label}>
        {busy ? "…" : children}
      </button>
      {error && <span className="inline-error" role="alert">{error}</span>}
    </span>
  );
}

export function Card({ title, children, actions }: { title: ReactNode; children: ReactNode; actions?: ReactNode }) {
  return (
    <section className="card">
      <header>
        <h2>{title}</h2>
        {actions && <div className="card-actions">{actions}</div>}
      </header>
      {children}
    </section>
  );
}

type TaskColumn = "message" | "agent" | "parent";
const TASK_COLUMN_TITLES: Record<TaskColumn, string> = { message: "Message", agent: "Agent", parent: "Parent" };

/** Tasks as a table: name (a link), phase, type, the chosen extra columns, and when each was created. */
export function TaskTable({ tasks, columns }: { tasks: Task[]; columns: TaskColumn[] }) {
  const cell = (task: Task, column: TaskColumn) => {
    if (column === "message") return <td key={column} className="message">{task.status?.message}</td>;
    const value = column === "agent" ? task.spec.agentRef?.name : task.metadata.annotations?.["orka.ai/parent-task-name"];
    return <td key={column}>{value ?? <span className="muted">—</span>}</td>;
  };
  return (
    <table className="table">
      <thead>
        <tr>
          <th>Name</th>
          <th>Phase</th>
          <th>Type</th>
          {columns.map((c) => (
            <th key={c}>{TASK_COLUMN_TITLES[c]}</th>
          ))}
          <th>Created</th>
        </tr>
      </thead>
      <tbody>
        {tasks.map((task) => (
          <tr key={task.metadata.name}>
            <td>
              <Link to={`/tasks/${encodeURIComponent(task.metadata.name)}`}>{task.metadata.name}</Link>
            </td>
            <td>
              <PhaseBadge phase={task.status?.phase} />
            </td>
            <td>{task.spec.type}</td>
            {columns.map((c) => cell(task, c))}
            <td>
              <Time at={task.metadata.creationTimestamp} />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** Follows the Task watch from the position a summary was read at; rendered only once that position is known. */
export function FollowTaskChanges({ from, onChange }: { from: number; onChange: () => void }) {
  useTaskChanges(from, onChange);
  return null;
}
