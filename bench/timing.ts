/**
 * Create → first model request is timed over Tasks one at a time, each after the one before has reached the
 * model, following this many untimed ones: the same number for Orka (bench/run.ts) and for the floor under
 * it (bench/floor.ts), so both are timed on code V8 has had the same chance to optimize.
 */
export const LATENCY_WARM_UP = 10;

/** How many Tasks create → first model request is timed over. */
export function latencySamples(quick: boolean): number {
  return quick ? 10 : 50;
}

/** p50 and p95 of measured durations, in milliseconds. */
export function percentiles(times: number[]): { p50_ms: number; p95_ms: number } {
  const sorted = [...times].sort((a, b) => a - b);
  const at = (q: number) => +sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))].toFixed(3);
  return { p50_ms: at(0.5), p95_ms: at(0.95) };
}

/** Times `runs` sequential calls after `warmup` untimed ones and prints one JSON line. */
export async function measure(label: string, runs: number, call: () => Promise<unknown>, warmup = 1): Promise<void> {
  for (let i = 0; i < warmup; i++) await call();
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    await call();
    times.push(performance.now() - started);
  }
  console.log(JSON.stringify({ bench: label, runs, ...percentiles(times) }));
}
