// Runs one agent loop `runs` times, `concurrency` at a time, for each `<runs>:<concurrency>` argument.
export async function measure(peer, one) {
  await one();
  for (const pair of process.argv.slice(3)) {
    const [runs, concurrency] = pair.split(":").map(Number);
    let started = 0;
    const t0 = performance.now();
    await Promise.all(Array.from({ length: concurrency }, async () => { while (started < runs) { started++; await one(); } }));
    const ms = performance.now() - t0;
    console.log(JSON.stringify({ peer, runs, concurrency, runs_per_s: +(runs / ms * 1000).toFixed(1), rss_mb: Math.round(process.memoryUsage().rss / 1e6) }));
  }
}
