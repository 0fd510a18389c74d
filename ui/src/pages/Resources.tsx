import { stringify } from "yaml";
import { Card, Pre, Show } from "../components.tsx";
import { useApiGet } from "../hooks.ts";
import type { List, Resource } from "../types.ts";

/** One card per resource: its spec as YAML (Secrets are never shown; Providers only name theirs). */
function ResourcePage({ kind, path, summary }: { kind: string; path: string; summary: (r: Resource) => string }) {
  const list = useApiGet<List<Resource>>(path, {}, { pollMs: 5000 });
  return (
    <div className="page">
      <h1>{kind}s</h1>
      <Show loaded={list} what={`${kind.toLowerCase()}s`} empty={(d) => d.items.length === 0}>
        {({ items }) => (
          <div className="cards">
            {items.map((r) => (
              <Card key={r.metadata.name} title={r.metadata.name}>
                <p className="muted">{summary(r)}</p>
                <details>
                  <summary>spec</summary>
                  <Pre text={stringify(r.spec)} />
                </details>
              </Card>
            ))}
          </div>
        )}
      </Show>
    </div>
  );
}

const field = (r: Resource, ...path: string[]) => path.reduce<unknown>((node, key) => (node as Record<string, unknown> | undefined)?.[key], r.spec);

export function Agents() {
  return (
    <ResourcePage
      kind="Agent"
      path="agents"
      summary={(r) => {
        const coordination = field(r, "coordination", "enabled") ? (field(r, "coordination", "autonomous") ? "autonomous coordinator" : "coordinator") : "agent";
        const provider = (field(r, "providerRef", "name") as string | undefined) ?? (field(r, "runtime", "type") as string | undefined) ?? "no provider";
        const tools = ((field(r, "tools") as { name: string }[] | undefined) ?? []).map((t) => t.name);
        return `${coordination} · ${provider}${tools.length ? ` · tools: ${tools.join(", ")}` : ""}`;
      }}
    />
  );
}

export function Providers() {
  return <ResourcePage kind="Provider" path="providers" summary={(r) => `${field(r, "type")} · default model ${(field(r, "defaultModel") as string | undefined) ?? "—"}`} />;
}

interface ToolInfo {
  name: string;
  builtin: boolean;
  description: string;
  parameters: unknown;
  available?: boolean;
  url?: string;
}

/** Built-in tools with their parameter schemas, and this namespace's custom Tools. */
export function Tools() {
  const list = useApiGet<List<ToolInfo>>("tools", {}, { pollMs: 10000 });
  return (
    <div className="page">
      <h1>Tools</h1>
      <Show loaded={list} what="tools" empty={(d) => d.items.length === 0}>
        {({ items }) => (
          <div className="cards">
            {items.map((tool) => (
              <Card
                key={tool.name}
                title={
                  <>
                    {tool.name} <span className="badge">{tool.builtin ? "built-in" : "custom"}</span>
                    {tool.available === false && <span className="badge phase-failed">unavailable</span>}
                  </>
                }
              >
                <p>{tool.description}</p>
                {tool.url && <p className="muted">{tool.url}</p>}
                <details>
                  <summary>parameters</summary>
                  <Pre text={JSON.stringify(tool.parameters, null, 2)} />
                </details>
              </Card>
            ))}
          </div>
        )}
      </Show>
    </div>
  );
}
