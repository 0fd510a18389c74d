// Runs one agent loop `runs` times, `concurrency` at a time, for each `<runs>:<concurrency>` argument,
// after one warm-up loop unless the first argument is --no-warm-up.
export async function measure(peer, one) {
  const args = process.argv.slice(3);
  const warmUp = args[0] !== "--no-warm-up";
  if (warmUp) await one();
  for (const pair of warmUp ? args : args.slice(1)) {
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
