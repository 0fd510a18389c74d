// npm run bench (`npm run bench -- --quick`: a reduced run, under a minute): Orka beside in-process agent
// frameworks on the 3-tool-call loop of bench/peers/ (three `noop` tool calls, then "done"), all against
// one zero-latency fake model in its own process. The peers run before and after Orka, to bracket the
// machine's noise. Orka: Task created through the API → Succeeded, every step durable. Prints that table,
// then runs the other figure groups of the performance issue, each in its own process and printing its
// own table (FIGURE_GROUPS); asserts nothing.
import { spawn } from "node:child_process";
import { once } from "node:events";
import { cpus, loadavg } from "node:os";
import { join } from "node:path";
import { startChildServer } from "./child-server.ts";
import { PEERS, preparePeers, runPeer, type PeerFigure } from "./peers/peers.ts";
import { startBenchServer } from "./server.ts";
import { takeNoted } from "./timed-model.ts";
import { markdownTable, p50p95 } from "./table.ts";
import { percentiles } from "./timing.ts";

const QUICK = process.argv.includes("--quick");
const CONCURRENCIES = [1, 50] as const;
const RUNS: Record<(typeof CONCURRENCIES)[number], number> = QUICK ? { 1: 10, 50: 50 } : { 1: 100, 50: 400 };
const LATENCY_SAMPLES = QUICK ? 10 : 50;
/** Per tool call overhead, delegate → child end → parent wake, many concurrent Tasks against a slow model. */
const FIGURE_GROUPS = ["tool-overhead.ts", "coordination.ts", "drain.ts"];
const PAIRS = CONCURRENCIES.map((concurrency) => ({ runs: RUNS[concurrency], concurrency }));

interface Row {
  system: string;
  runsPerSecond: Partial<Record<number, number>>;
  note?: string;
}

/** Each peer at each concurrency; a peer that cannot be installed or run is a row that says why. */
async function measurePeers(dir: string | Error, modelPort: string, when: string): Promise<Row[]> {
  const rows: Row[] = [];
  for (const peer of PEERS) {
    const system = `${peer.name} (${when})`;
    if (dir instanceof Error) {
      rows.push({ system, runsPerSecond: {}, note: `not run: ${dir.message}` });
      continue;
    }
    const figures: PeerFigure[] | Error = await runPeer(dir, peer.script, modelPort, PAIRS).catch((err: Error) => err);
    if (figures instanceof Error) rows.push({ system, runsPerSecond: {}, note: `not run: ${figures.message.split("\n")[0]}` });
    else rows.push({ system, runsPerSecond: Object.fromEntries(figures.map((f) => [f.concurrency, f.runs_per_s])) });
  }
  return rows;
}

/**
 * Orka's runs/s at each concurrency, and create → first model request, one Task at a time. The latency
 * Tasks talk to the timed model in a process of its own, which notes when each request arrives on the
 * machine's wall clock: a model in the server's own process would hear a request only when the server's
 * event loop let it.
 */
async function measureOrka(modelURL: string): Promise<{ row: Row; latency: { p50_ms: number; p95_ms: number } }> {
  const watched = await startChildServer(join(import.meta.dirname, "timed-model.ts"));
  try {
    const orka = await startBenchServer("run", { ORKA_ALLOW_LOOPBACK_EGRESS: "true", ORKA_WORKER_SLOTS: String(Math.max(...CONCURRENCIES)) });
    try {
      return await measureOrkaWith(orka, modelURL, watched.url);
    } finally {
      await orka.close();
    }
  } finally {
    watched.close();
  }
}

async function measureOrkaWith(orka: Awaited<ReturnType<typeof startBenchServer>>, modelURL: string, watchedURL: string) {
  await orka.api("POST", "/secrets", { name: "key", stringData: { "api-key": "k" } });
  await orka.api("POST", "/tools", { metadata: { name: "noop" }, spec: { description: "no-op", parameters: { type: "object", properties: { n: { type: "number" } } }, http: { url: `${modelURL}/noop` } } });
  for (const [name, url] of [["loop", modelURL], ["watched", watchedURL]]) {
    await orka.api("POST", "/providers", { metadata: { name }, spec: { type: "openai", baseURL: `${url}/v1`, secretRef: { name: "key" }, defaultModel: "fake" } });
    await orka.api("POST", "/agents", { metadata: { name }, spec: { providerRef: { name }, systemPrompt: { inline: "x" }, tools: [{ name: "noop" }] } });
  }
  // One untimed Task first: the worker processes load their modules on their first attempt.
  await orka.runTask("warm-up", "watched");
  const created = new Map<string, number>();
  for (let i = 0; i < LATENCY_SAMPLES; i++) {
    created.set(`latency-${i}`, performance.timeOrigin + performance.now());
    await orka.runTask(`latency-${i}`, "watched");
  }
  const firstRequests = (await takeNoted(watchedURL)).filter((note) => note.kind === "model" && note.turn === 0 && created.has(note.conversation));
  if (firstRequests.length !== LATENCY_SAMPLES) throw new Error(`the timed model heard ${firstRequests.length} of ${LATENCY_SAMPLES} latency Tasks' first requests`);
  const latencies = firstRequests.map((note) => note.arrivedAt - created.get(note.conversation)!);
  const runsPerSecond: Record<number, number> = {};
  for (const { runs, concurrency } of PAIRS) {
    let started = 0;
    const t0 = performance.now();
    await Promise.all(Array.from({ length: concurrency }, async () => {
      while (started < runs) await orka.runTask(`loop-${concurrency}-${started++}`, "loop");
    }));
    runsPerSecond[concurrency] = +((runs / (performance.now() - t0)) * 1000).toFixed(1);
  }
  return { row: { system: "Orka (API create → Succeeded, every step durable)", runsPerSecond }, latency: percentiles(latencies) };
}

function table(rows: Row[], orka: Row, latency: { p50_ms: number; p95_ms: number }): string {
  const ratio = (row: Row, c: number) => (row === orka || !row.runsPerSecond[c] || !orka.runsPerSecond[c] ? "" : `${(orka.runsPerSecond[c]! / row.runsPerSecond[c]!).toFixed(2)}×`);
  const cells = (row: Row) => [
    row.system,
    ...CONCURRENCIES.map((c) => String(row.runsPerSecond[c] ?? "–")),
    ...CONCURRENCIES.map((c) => ratio(row, c)),
    row === orka ? p50p95(latency) : (row.note ?? ""),
  ];
  const header = ["system", ...CONCURRENCIES.map((c) => `runs/s at ${c}`), ...CONCURRENCIES.map((c) => `Orka ÷ this at ${c}`), "create → first model request p50 / p95 ms"];
  return markdownTable(header, rows.map(cells));
}

/** One figure group in its own process, one after the other so that they do not disturb each other. */
async function runFigureGroup(script: string): Promise<void> {
  const child = spawn(process.execPath, [join(import.meta.dirname, script), ...(QUICK ? ["--quick"] : [])], { stdio: "inherit" });
  const [code] = (await once(child, "exit")) as [number | null];
  if (code !== 0) console.log(`\nbench/${script} failed (exit ${code}): its table is missing.`);
}

const loadAtStart = loadavg()[0];
const model = await startChildServer(join(import.meta.dirname, "peers", "fake-model.ts"));
try {
  const peersDir = await preparePeers().catch((err: Error) => err);
  const before = await measurePeers(peersDir, model.port, "before Orka");
  const orka = await measureOrka(model.url);
  const after = await measurePeers(peersDir, model.port, "after Orka");
  const rows = [orka.row, ...PEERS.flatMap((_, i) => [before[i], after[i]])];
  console.log(`${QUICK ? "Quick run" : "Run"}: ${PAIRS.map((p) => `${p.runs} runs at concurrency ${p.concurrency}`).join(", ")}; ${LATENCY_SAMPLES} Tasks one at a time, after a warm-up Task, for the latency. ` +
    `Node ${process.version}, ${cpus().length} × ${cpus()[0]?.model.trim()}, load average ${loadAtStart.toFixed(1)} when the run started. ` +
    `Then ${FIGURE_GROUPS.map((script) => `bench/${script}`).join(", ")}${QUICK ? ", each reduced too" : ""}.\n`);
  console.log(table(rows, orka.row, orka.latency));
} finally {
  model.close();
}
for (const script of FIGURE_GROUPS) await runFigureGroup(script);
console.log(`\nThe run took ${(performance.now() / 1000).toFixed(0)} s; load average ${loadavg()[0].toFixed(1)} when it ended.`);
