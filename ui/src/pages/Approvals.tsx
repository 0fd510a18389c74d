import { useState } from "react";
import { useApi } from "../api-context.ts";
import { ActionButton, Card, JsonText, Show, Time } from "../components.tsx";
import { useApiGet } from "../hooks.ts";
import { Link } from "../router.tsx";
import type { Approval } from "../types.ts";

/** Pending approvals: the exact tool and arguments a Task asks to run, decided by a person. */
export function Approvals() {
  const pending = useApiGet<{ approvals: Approval[] }>("approvals", { status: "pending" }, { pollMs: 2000 });
  const decided = useApiGet<{ approvals: Approval[] }>("approvals", { limit: 20 }, { pollMs: 5000 });
  const reload = () => {
    pending.reload();
    decided.reload();
  };
  return (
    <div className="page">
      <h1>Approvals</h1>
      <Show loaded={pending} what="pending approvals" empty={(d) => d.approvals.length === 0}>
        {({ approvals }) => (
          <div className="approvals">
            {approvals.map((approval) => (
              <PendingApproval key={approval.id} approval={approval} onDecided={reload} />
            ))}
          </div>
        )}
      </Show>
      <Card title="Recently decided">
        <Show loaded={decided} what="decisions" empty={(d) => d.approvals.every((a) => a.status === "pending")}>
          {({ approvals }) => (
            <table className="table">
              <thead>
                <tr>
                  <th>Task</th>
                  <th>Tool</th>
                  <th>Decision</th>
                  <th>By</th>
                  <th>Reason</th>
                </tr>
              </thead>
              <tbody>
                {approvals
                  .filter((a) => a.status !== "pending")
                  .map((a) => (
                    <tr key={a.id}>
                      <td>
                        <Link to={`/tasks/${encodeURIComponent(a.taskName)}`}>{a.taskName}</Link>
                      </td>
                      <td>{a.targetTool}</td>
                      <td>
                        <span className={`badge decision-${a.status}`}>{a.status}</span>
                      </td>
                      <td>{a.decisionActor ?? "—"}</td>
                      <td className="message">{a.decisionReason ?? ""}</td>
                    </tr>
                  ))}
              </tbody>
            </table>
          )}
        </Show>
      </Card>
    </div>
  );
}

function PendingApproval({ approval, onDecided }: { approval: Approval; onDecided: () => void }) {
  const api = useApi();
  const [reason, setReason] = useState("");
  const decide = (decision: "approve" | "decline") =>
    api.post(`tasks/${encodeURIComponent(approval.taskName)}/approvals/${approval.id}/decision`, { decision, ...(reason ? { reason } : {}) }).then(onDecided);
  return (
    <Card
      title={
        <>
          {approval.action} <span className={`badge severity-${approval.severity}`}>{approval.severity}</span>
        </>
      }
    >
      <dl className="facts">
        <dt>Task</dt>
        <dd>
          <Link to={`/tasks/${encodeURIComponent(approval.taskName)}`}>{approval.taskName}</Link>
        </dd>
        <dt>Tool</dt>
        <dd>
          <code>{approval.targetTool}</code>
        </dd>
        <dt>Arguments</dt>
        <dd>
          <JsonText text={approval.targetArgsPreview} />
        </dd>
        {approval.riskSummary && (
          <>
            <dt>Risk</dt>
            <dd>{approval.riskSummary}</dd>
          </>
        )}
        <dt>Asked</dt>
        <dd>
          <Time at={approval.createdAt} />
        </dd>
        <dt>Id</dt>
        <dd>
          <code className="muted">{approval.id}</code>
        </dd>
      </dl>
      <div className="decision">
        <input placeholder="Reason (optional)" value={reason} onChange={(e) => setReason(e.target.value)} aria-label="Reason" />
        <ActionButton onAction={() => decide("approve")}>Approve</ActionButton>
        <ActionButton kind="danger" onAction={() => decide("decline")}>
          Decline
        </ActionButton>
      </div>
    </Card>
  );
}
