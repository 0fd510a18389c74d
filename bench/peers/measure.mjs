// What every peer script shares: its arguments, its `noop` tool's work and its measuring loop.
// node <peer>.mjs <model port> [--no-warm-up] [--tool-over-http] <runs>:<concurrency>…
//   --no-warm-up      no untimed loop first (one otherwise);
//   --tool-over-http  the tool POSTs its arguments to the fake model's /noop and answers what it says, the
//                     call Orka's custom HTTP Tool makes, through the same client (undici's request); without it
//                     the tool is a function that answers at once.
import { request } from "undici";
const [port, ...rest] = process.argv.slice(2);
const flags = new Set(rest.filter((arg) => arg.startsWith("--")));
const pairs = rest.filter((arg) => !arg.startsWith("--"));
// A mistyped flag would measure something else without saying so.
for (const flag of flags) if (flag !== "--no-warm-up" && flag !== "--tool-over-http") throw new Error(`unknown flag ${flag}: give --no-warm-up or --tool-over-http`);

/** The fake model's base URL. */
export const modelURL = `http://127.0.0.1:${port}`;

/** The `noop` tool's work: a function, or the same HTTP call as Orka's custom HTTP Tool. */
export const noop = flags.has("--tool-over-http")
  ? async (args) => (await request(`${modelURL}/noop`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(args) })).body.text()
  : async ({ n }) => `ok ${n}`;

/** Runs one agent loop `runs` times, `concurrency` at a time, for each `<runs>:<concurrency>` argument, printing one JSON line each. */
export async function measure(peer, one) {
  if (!flags.has("--no-warm-up")) await one();
  for (const pair of pairs) {
    const [runs, concurrency] = pair.split(":").map(Number);
    let started = 0;
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    await Promise.all(Array.from({ length: concurrency }, async () => { while (started < runs) { started++; await one(); } }));
    const ms = performance.now() - t0;
    const cpu = process.cpuUsage(cpu0);
    console.log(JSON.stringify({ peer, runs, concurrency, runs_per_s: +(runs / ms * 1000).toFixed(1), cpu_ms_per_run: +((cpu.user + cpu.system) / 1000 / runs).toFixed(2), rss_mb: Math.round(process.memoryUsage().rss / 1e6) }));
  }
}
