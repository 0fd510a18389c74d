import { useState } from "react";
import { Card, Show } from "../components.tsx";
import { useApiGet } from "../hooks.ts";

interface SessionInfo {
  name: string;
  messageCount?: number;
  updatedAt?: string;
}

/** Conversation sessions and their transcripts. */
export function Sessions() {
  const [open, setOpen] = useState<string>();
  const sessions = useApiGet<{ items: SessionInfo[] }>("sessions", {}, { pollMs: 5000 });
  const transcript = useApiGet<{ messages: { role: string; content: string; taskName?: string }[] }>(`sessions/${encodeURIComponent(open ?? "")}`, {}, { enabled: open !== undefined });
  return (
    <div className="page">
      <h1>Sessions</h1>
      <Show loaded={sessions} what="sessions" empty={(d) => d.items.length === 0}>
        {({ items }) => (
          <ul className="plain-list">
            {items.map((s) => (
              <li key={s.name}>
                <button className="link" onClick={() => setOpen(s.name)}>
                  {s.name}
                </button>{" "}
                <span className="muted">{s.messageCount !== undefined ? `${s.messageCount} messages` : ""}</span>
              </li>
            ))}
          </ul>
        )}
      </Show>
      {open && (
        <Card title={`Transcript of ${open}`}>
          <Show loaded={transcript} what="the transcript" empty={(d) => d.messages.length === 0}>
            {({ messages }) => (
              <ol className="transcript">
                {messages.map((m, i) => (
                  <li key={i} className={`message-${m.role}`}>
                    <span className="badge">{m.role}</span> {m.content}
                  </li>
                ))}
              </ol>
            )}
          </Show>
        </Card>
      )}
    </div>
  );
}
