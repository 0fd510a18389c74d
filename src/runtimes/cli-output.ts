/** The last line of the output that is a JSON object `matches` accepts (CLIs may print other lines around it). */
export function lastJsonObject(stdout: string, matches: (o: Record<string, unknown>) => boolean): Record<string, unknown> | undefined {
  const lines = stdout.split("\n").map((line) => line.trim()).filter((line) => line.startsWith("{"));
  for (const line of lines.reverse()) {
    try {
      const parsed: unknown = JSON.parse(line);
      if (parsed !== null && typeof parsed === "object" && !Array.isArray(parsed) && matches(parsed as Record<string, unknown>)) return parsed as Record<string, unknown>;
    } catch {
      // Not every line a CLI prints is JSON.
    }
  }
  return undefined;
}
