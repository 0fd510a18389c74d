import { Card, Show, TaskTable } from "../components.tsx";
import { useApiGet, useWatchedTasks } from "../hooks.ts";
import { Link } from "../router.tsx";

const PHASES = ["Running", "Pending", "Scheduled", "Succeeded", "Failed", "Cancelled"];

export function Overview() {
  const tasks = useWatchedTasks();
  const approvals = useApiGet<{ approvals: unknown[] }>("approvals", { status: "pending" }, { pollMs: 3000 });
  return (
    <div className="page">
      <h1>Overview</h1>
      <Show loaded={tasks} what="tasks">
        {(items) => {
          const count = (phase: string) => items.filter((t) => (t.status?.phase ?? "Pending") === phase).length;
          // Failures first, then the newest: what needs attention comes to the top.
          const recent = [...items]
            .sort((a, b) => Number(b.status?.phase === "Failed") - Number(a.status?.phase === "Failed") || (b.metadata.creationTimestamp ?? "").localeCompare(a.metadata.creationTimestamp ?? ""))
            .slice(0, 12);
          return (
            <>
              <div className="stats">
                {PHASES.map((phase) => (
                  <div key={phase} className={`stat phase-${phase.toLowerCase()}`}>
                    <span className="stat-value">{count(phase)}</span>
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
          );
        }}
      </Show>
    </div>
  );
}
