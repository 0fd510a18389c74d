import { Card, FollowTaskChanges, Show, TaskTable } from "../components.tsx";
import { useApiGet } from "../hooks.ts";
import { Link } from "../router.tsx";
import type { TaskSummary } from "../types.ts";

const PHASES = ["Running", "Pending", "Scheduled", "Succeeded", "Failed", "Cancelled"];

/** Counts and the newest Tasks from the server's summary, read again when the watch reports a change. */
export function Overview() {
  const summary = useApiGet<TaskSummary>("task-summary");
  const approvals = useApiGet<{ approvals: unknown[] }>("approvals", { status: "pending" }, { pollMs: 3000 });
  return (
    <div className="page">
      <h1>Overview</h1>
      <Show loaded={summary} what="tasks">
        {({ phases, recent, resourceVersion }) => (
          <>
            <FollowTaskChanges from={resourceVersion} onChange={summary.reload} />
            <div className="stats">
              {PHASES.map((phase) => (
                <div key={phase} className={`stat phase-${phase.toLowerCase()}`}>
                  <span className="stat-value">{phases[phase] ?? 0}</span>
                  <span className="stat-label">{phase}</span>
                </div>
              ))}
              <Link to="/approvals" className="stat approvals">
                <span className="stat-value">{approvals.data?.approvals.length ?? "…"}</span>
                <span className="stat-label">Pending approvals</span>
              </Link>
            </div>
            <Card title="Recent tasks" actions={<Link to="/tasks">All tasks →</Link>}>
              {recent.length === 0 ? (
                <p className="state empty">
                  No tasks in this namespace yet. <Link to="/tasks">Create one</Link>.
                </p>
              ) : (
                <TaskTable tasks={recent} columns={["message"]} />
              )}
            </Card>
          </>
        )}
      </Show>
    </div>
  );
}
