/** A Markdown table: the header, then one line per row. */
export function markdownTable(header: string[], rows: string[][]): string {
  return [header, header.map(() => "---"), ...rows].map((line) => `| ${line.join(" | ")} |`).join("\n");
}

/** `p50 / p95` of a percentiles pair, in milliseconds to one decimal. */
export const p50p95 = (figure: { p50_ms: number; p95_ms: number }) => `${figure.p50_ms.toFixed(1)} / ${figure.p95_ms.toFixed(1)}`;
