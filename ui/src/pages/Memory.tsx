import { useState } from "react";
import { useApi } from "../api-context.ts";
import { ActionButton, Card, Show } from "../components.tsx";
import { useApiGet } from "../hooks.ts";
import { Link } from "../router.tsx";
import type { List, Memory, Proposal } from "../types.ts";

const PROPOSAL_FILTERS = ["pending", "accepted", "rejected", "applied", "archived"];

/** Durable memory: what agents may recall, and the proposals a person reviews before anything is remembered. */
export function MemoryPage() {
  const api = useApi();
  const [status, setStatus] = useState("pending");
  const proposals = useApiGet<List<Proposal>>("memory-proposals", { status }, { pollMs: 3000 });
  const memories = useApiGet<List<Memory>>("memories", { includeDisabled: "true" }, { pollMs: 5000 });
  const reload = () => {
    proposals.reload();
    memories.reload();
  };
  return (
    <div className="page">
      <h1>Memory</h1>
      <Card
        title="Proposals"
        actions={
          <div className="segmented" role="group" aria-label="Proposal status">
            {PROPOSAL_FILTERS.map((s) => (
              <button key={s} className={s === status ? "active" : ""} onClick={() => setStatus(s)}>
                {s}
              </button>
            ))}
          </div>
        }
      >
        <Show loaded={proposals} what={`${status} proposals`} empty={(d) => d.items.length === 0}>
          {({ items }) => (
            <div className="proposals">
              {items.map((p) => (
                <article key={p.id} className="proposal" data-proposal={p.id}>
                  <header>
                    <strong>{p.title}</strong> <span className="badge">{p.type}</span> <span className={`badge decision-${p.status}`}>{p.status}</span>
                  </header>
                  <p className="proposal-content">{p.content}</p>
                  <p className="muted">
                    {p.tags?.length ? `tags: ${p.tags.join(", ")} · ` : ""}
                    {p.taskName ? (
                      <>
                        from <Link to={`/tasks/${encodeURIComponent(p.taskName)}`}>{p.taskName}</Link>
                      </>
                    ) : null}
                    {p.reviewer ? ` · reviewed by ${p.reviewer}` : ""}
                  </p>
                  <div className="buttons">
                    {p.status === "pending" && (
                      <>
                        <ActionButton onAction={() => api.post(`memory-proposals/${p.id}/review`, { status: "accepted" }).then(reload)}>Accept</ActionButton>
                        <ActionButton kind="danger" onAction={() => api.post(`memory-proposals/${p.id}/review`, { status: "rejected" }).then(reload)}>
                          Reject
                        </ActionButton>
                      </>
                    )}
                    {p.status === "accepted" && <ActionButton onAction={() => api.post(`memory-proposals/${p.id}/apply`).then(reload)}>Apply</ActionButton>}
                    {p.status !== "archived" && p.status !== "pending" && (
                      <ActionButton kind="plain" onAction={() => api.post(`memory-proposals/${p.id}/archive`).then(reload)}>
                        Archive
                      </ActionButton>
                    )}
                  </div>
                </article>
              ))}
            </div>
          )}
        </Show>
      </Card>
      <Card title="Memories">
        <Show loaded={memories} what="memories" empty={(d) => d.items.length === 0}>
          {({ items }) => (
            <table className="table">
              <thead>
                <tr>
                  <th>Content</th>
                  <th>Source</th>
                  <th>Tags</th>
                  <th>State</th>
                  <th />
                </tr>
              </thead>
              <tbody>
                {items.map((m) => (
                  <tr key={m.id}>
                    <td className="message">{m.content}</td>
                    <td>{m.taskName ?? m.source}</td>
                    <td>{m.tags?.join(", ")}</td>
                    <td>{m.disabled ? "disabled" : "enabled"}</td>
                    <td>
                      <ActionButton kind="plain" onAction={() => api.post(`memories/${m.id}/${m.disabled ? "enable" : "disable"}`).then(reload)}>
                        {m.disabled ? "Enable" : "Disable"}
                      </ActionButton>
                    </td>
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
