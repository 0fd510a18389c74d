import { useState } from "react";
import { parse } from "yaml";
import { useApi } from "../api-context.ts";
import { Card, FollowTaskChanges, Show, TaskTable } from "../components.tsx";
import { useApiGet } from "../hooks.ts";
import { navigate } from "../router.tsx";
import type { List, Resource, Task, TaskSummary } from "../types.ts";

const PHASE_FILTERS = ["All", "Running", "Pending", "Scheduled", "Succeeded", "Failed", "Cancelled"];

const PAGE_SIZE = 50;

/** One page of Tasks at a time (the list's continue tokens); the summary's counts and watch position keep it current. */
export function TaskList() {
  const [phase, setPhase] = useState("All");
  const [text, setText] = useState("");
  const [creating, setCreating] = useState(false);
  // The continue token of each page opened so far; the last one is the page shown.
  const [pageTokens, setPageTokens] = useState<string[]>([]);
  const page = useApiGet<List<Task>>("tasks", { limit: PAGE_SIZE, continue: pageTokens.at(-1) });
  const summary = useApiGet<TaskSummary>("task-summary");
  const next = page.data?.metadata?.continue;
  return (
    <div className="page">
      <div className="page-head">
        <h1>Tasks</h1>
        <button className="button primary" onClick={() => setCreating((c) => !c)}>
          {creating ? "Close" : "New task"}
        </button>
      </div>
      {creating && <CreateTask />}
      {summary.data && (
        <FollowTaskChanges
          from={summary.data.resourceVersion}
          onChange={() => {
            summary.reload();
            page.reload();
          }}
        />
      )}
      <div className="filters">
        <div className="segmented" role="group" aria-label="Phase">
          {PHASE_FILTERS.map((p) => (
            <button key={p} className={p === phase ? "active" : ""} onClick={() => setPhase(p)}>
              {p} <span className="muted">{p === "All" ? summary.data?.total : (summary.data?.phases[p] ?? 0)}</span>
            </button>
          ))}
        </div>
        <input className="search" placeholder="Filter this page by name, agent or type" value={text} onChange={(e) => setText(e.target.value)} aria-label="Filter tasks" />
      </div>
      <Show loaded={page} what="tasks" empty={({ items }) => items.length === 0 && pageTokens.length === 0}>
        {({ items }) => {
          const shown = items
            .filter((t) => phase === "All" || (t.status?.phase ?? "Pending") === phase)
            .filter((t) => !text || `${t.metadata.name} ${t.spec.agentRef?.name ?? ""} ${t.spec.type}`.toLowerCase().includes(text.toLowerCase()));
          return shown.length === 0 ? <p className="state empty">No tasks on this page match these filters.</p> : <TaskTable tasks={shown} columns={["agent", "parent"]} />;
        }}
      </Show>
      <nav className="pager" aria-label="Pages">
        <button className="button plain" disabled={pageTokens.length === 0} onClick={() => setPageTokens((tokens) => tokens.slice(0, -1))}>
          ← Previous
        </button>
        <span className="muted">Page {pageTokens.length + 1}</span>
        <button className="button plain" disabled={!next} onClick={() => next && setPageTokens((tokens) => [...tokens, next])}>
          Next →
        </button>
      </nav>
    </div>
  );
}

const EXAMPLE_YAML = `apiVersion: core.orka.ai/v1alpha1
kind: Task
metadata:
  name: my-task
spec:
  type: ai
  agentRef: {name: my-agent}
  prompt: Summarise the latest release notes.
`;

/** New Task from fields (ai / agent / container) or from YAML; the server's validation message is shown as is. */
function CreateTask() {
  const api = useApi();
  const agents = useApiGet<List<Resource>>("agents");
  const [mode, setMode] = useState<"fields" | "yaml">("fields");
  const [type, setType] = useState<"ai" | "agent" | "container">("ai");
  const [name, setName] = useState("");
  const [agent, setAgent] = useState("");
  const [prompt, setPrompt] = useState("");
  const [command, setCommand] = useState("");
  const [yaml, setYaml] = useState(EXAMPLE_YAML);
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);

  const body = (): unknown => {
    if (mode === "yaml") {
      const doc = parse(yaml) as { kind?: string } | null;
      if (!doc || typeof doc !== "object") throw new Error("the YAML is not a Task document");
      if (doc.kind && doc.kind !== "Task") throw new Error(`the YAML is a ${doc.kind}, not a Task`);
      return doc;
    }
    if (type === "container") return { name, type, command: command.trim() ? ["sh", "-c", command] : [] };
    return { name, type, ...(agent ? { agentRef: agent } : {}), prompt };
  };

  const submit = async () => {
    setBusy(true);
    setError(undefined);
    try {
      const created = await api.post<Task>("tasks", body());
      navigate(`/tasks/${encodeURIComponent(created.metadata.name)}`);
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <Card
      title="New task"
      actions={
        <div className="segmented" role="group" aria-label="Form">
          <button className={mode === "fields" ? "active" : ""} onClick={() => setMode("fields")}>
            Fields
          </button>
          <button className={mode === "yaml" ? "active" : ""} onClick={() => setMode("yaml")}>
            YAML
          </button>
        </div>
      }
    >
      <form
        className="form"
        onSubmit={(event) => {
          event.preventDefault();
          void submit();
        }}
      >
        {mode === "yaml" ? (
          <label>
            Task YAML
            <textarea className="code" rows={12} value={yaml} onChange={(e) => setYaml(e.target.value)} aria-label="Task YAML" />
          </label>
        ) : (
          <>
            <div className="row">
              <label>
                Name
                <input value={name} onChange={(e) => setName(e.target.value)} placeholder="my-task" required aria-label="Task name" />
              </label>
              <label>
                Type
                <select value={type} onChange={(e) => setType(e.target.value as typeof type)} aria-label="Task type">
                  <option value="ai">ai</option>
                  <option value="agent">agent (coding CLI)</option>
                  <option value="container">container</option>
                </select>
              </label>
              {type !== "container" && (
                <label>
                  Agent
                  <select value={agent} onChange={(e) => setAgent(e.target.value)} aria-label="Agent">
                    <option value="">(none)</option>
                    {agents.data?.items.map((a) => (
                      <option key={a.metadata.name} value={a.metadata.name}>
                        {a.metadata.name}
                      </option>
                    ))}
                  </select>
                </label>
              )}
            </div>
            {type === "container" ? (
              <label>
                Command (run with sh -c in the sandbox)
                <input value={command} onChange={(e) => setCommand(e.target.value)} placeholder="echo hello" aria-label="Command" />
              </label>
            ) : (
              <label>
                Prompt
                <textarea rows={4} value={prompt} onChange={(e) => setPrompt(e.target.value)} aria-label="Prompt" />
              </label>
            )}
          </>
        )}
        {error && (
          <p className="state error" role="alert">
            {error}
          </p>
        )}
        <button className="button primary" type="submit" disabled={busy}>
          {busy ? "Creating…" : "Create task"}
        </button>
      </form>
    </Card>
  );
}
