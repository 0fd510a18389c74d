import { stringify } from "yaml";
import type { KindName } from "../resources/kinds.ts";

export type OutputFormat = "table" | "json" | "yaml";

type Row = Record<string, unknown>;
export type Column = [header: string, value: (item: Row) => unknown];

const get = (item: Row, path: string): unknown => path.split(".").reduce<unknown>((v, k) => (v as Row | undefined)?.[k], item);

export function age(timestamp: unknown, now = Date.now()): string {
  if (typeof timestamp !== "string") return "";
  const seconds = Math.max(0, Math.floor((now - Date.parse(timestamp)) / 1000));
  if (seconds < 120) return `${seconds}s`;
  if (seconds < 7200) return `${Math.floor(seconds / 60)}m`;
  if (seconds < 172_800) return `${Math.floor(seconds / 3600)}h`;
  return `${Math.floor(seconds / 86_400)}d`;
}

const COLUMNS: Record<KindName, Column[]> = {
  Task: [
    ["NAME", (i) => get(i, "metadata.name")],
    ["TYPE", (i) => get(i, "spec.type")],
    ["PHASE", (i) => get(i, "status.phase") ?? "Pending"],
    ["ATTEMPTS", (i) => get(i, "status.attempts") ?? 0],
    ["AGE", (i) => age(get(i, "metadata.creationTimestamp"))],
    ["MESSAGE", (i) => get(i, "status.message") ?? ""],
  ],
  Provider: [
    ["NAME", (i) => get(i, "metadata.name")],
    ["TYPE", (i) => get(i, "spec.type")],
    ["READY", (i) => get(i, "status.ready") ?? ""],
    ["MESSAGE", (i) => get(i, "status.message") ?? ""],
  ],
  Agent: [
    ["NAME", (i) => get(i, "metadata.name")],
    ["PROVIDER", (i) => get(i, "spec.providerRef.name") ?? ""],
    ["MODEL", (i) => get(i, "spec.model.name") ?? ""],
    ["COORDINATION", (i) => get(i, "spec.coordination.enabled") ?? false],
    ["AGE", (i) => age(get(i, "metadata.creationTimestamp"))],
  ],
  Tool: [
    ["NAME", (i) => i.name ?? get(i, "metadata.name")],
    ["BUILTIN", (i) => i.builtin ?? false],
    ["DESCRIPTION", (i) => i.description ?? get(i, "spec.description")],
  ],
  Skill: [
    ["NAME", (i) => get(i, "metadata.name")],
    ["DESCRIPTION", (i) => get(i, "spec.description")],
  ],
  Secret: [
    ["NAME", (i) => i.name],
    ["TYPE", (i) => i.type],
    ["KEYS", (i) => (i.keys as string[] | undefined)?.join(",")],
  ],
};

export function formatTable(headers: string[], rows: string[][]): string {
  const widths = headers.map((h, c) => Math.max(h.length, ...rows.map((r) => r[c].length)));
  const line = (cells: string[]) => cells.map((cell, c) => (c === cells.length - 1 ? cell : cell.padEnd(widths[c]))).join("   ").trimEnd();
  return [line(headers), ...rows.map(line)].join("\n");
}

export function render(kind: KindName, items: Row[], format: OutputFormat, single = false): string {
  return renderRows(`${kind.toLowerCase()}s`, COLUMNS[kind], items, format, single);
}

/** A table of `columns`, or the items themselves as JSON or YAML. */
export function renderRows(noun: string, columns: Column[], items: Row[], format: OutputFormat, single = false): string {
  if (format === "json") return JSON.stringify(single ? items[0] : items, null, 2);
  if (format === "yaml") return single ? stringify(items[0]) : items.map((i) => stringify(i)).join("---\n");
  if (items.length === 0) return `No ${noun} found.`;
  return formatTable(
    columns.map(([h]) => h),
    items.map((item) => columns.map(([, value]) => String(value(item) ?? ""))),
  );
}
