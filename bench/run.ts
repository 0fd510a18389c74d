// npm run bench (`npm run bench -- --quick`: a reduced run, under a minute): Orka beside in-process agent
// frameworks on the 3-tool-call loop of bench/peers/ (three `noop` tool calls, then "done"), all against
// one zero-latency fake model in its own process. The peers run before and after Orka, to bracket the
// machine's noise (a quick run: before only), each twice: its tool a function, as in the peers' own benchmark, and its tool making the
// same HTTP call as Orka's custom HTTP Tool (the fake model's POST /noop), like for like. Orka: Task created through the API → Succeeded (followed on one watch of the namespace's
// Tasks, as a client running many Tasks does), every step durable, the server in its own process. Beside them the bare loop
// (bench/bare-loop.ts): the same loop, driven the same way, through Orka's stores, IPC and OpenAI client with no logic
// between them, so the table shows what Orka's logic costs and what the machine allows with every step durable. Prints that table,
// then runs the other figure groups of the performance issue, each in its own process and printing its
// own table (FIGURE_GROUPS); asserts nothing.
import { spawn } from "node:child_process";
import { once } from "node:events";
import { cpus, loadavg } from "node:os";
import { join } from "node:path";
import { startChildServer } from "./child-server.ts";
import { PEERS, preparePeers, runPeer, TOOL_MODES, type PeerFigure } from "./peers/peers.ts";
import { mainThreadCpuSeconds, processTreeUsage } from "./process-tree.ts";
import { adminClient, declareLoop, startBareLoop, startOrkaProcess } from "./server.ts";
import { takeNoted } from "./timed-model.ts";
import { markdownTable, p50p95 } from "./table.ts";
import { LATENCY_WARM_UP, latencySamples, percentiles } from "./timing.ts";

const QUICK = process.argv.includes("--quick");
const CONCURRENCIES = [1, 50] as const;
const RUNS: Record<(typeof CONCURRENCIES)[number], number> = QUICK ? { 1: 10, 50: 50 } : { 1: 100, 50: 400 };
const LATENCY_SAMPLES = latencySamples(QUICK);
/** Per tool call overhead, delegate → child end → parent wake, many concurrent Tasks against a slow model, the floor under the server. */
const FIGURE_GROUPS = ["tool-overhead.ts", "coordination.ts", "drain.ts", "floor.ts"];
const PAIRS = CONCURRENCIES.map((concurrency) => ({ runs: RUNS[concurrency], concurrency }));
const BUSIEST = Math.max(...CONCURRENCIES);

interface Row {
  system: string;
  runsPerSecond: Partial<Record<number, number>>;
  /** CPU time per run at the highest concurrency, ms: the system's own processes, and what they are. */
  cpuPerRun?: { ms: number; parts: string; split?: ServerCpu };
  note?: string;
}

type Peer = (typeof PEERS)[number];
type ToolMode = (typeof TOOL_MODES)[number];
/** A peer's rows: for each of its tool's modes, before Orka and (unless a quick run) after. */
type PeerRows = { peer: Peer; mode: ToolMode; rows: Row[] }[];

/** Each peer, its tool in each mode, at each concurrency; a peer that cannot be installed or run is a row that says why. */
async function measurePeers(dir: string | Error, modelPort: string, when: string): Promise<Row[]> {
  const rows: Row[] = [];
  for (const peer of PEERS) {
    for (const mode of TOOL_MODES) {
      const system = `${peer.name}, ${mode.label} (${when})`;
      if (dir instanceof Error) {
        rows.push({ system, runsPerSecond: {}, note: `not run: ${dir.message}` });
        continue;
      }
      const figures: PeerFigure[] | Error = await runPeer(dir, peer.script, modelPort, PAIRS, { toolOverHttp: mode.toolOverHttp }).catch((err: Error) => err);
      if (figures instanceof Error) rows.push({ system, runsPerSecond: {}, note: `not run: ${figures.message.split("\n")[0]}` });
      else {
        const busiest = figures.find((f) => f.concurrency === BUSIEST);
        const cpuPerRun = busiest && { ms: busiest.cpu_ms_per_run, parts: `its one process (the loop, its SDK, ${mode.toolOverHttp ? "the tool's HTTP call" : "the tool as a function"})` };
        rows.push({ system, runsPerSecond: Object.fromEntries(figures.map((f) => [f.concurrency, f.runs_per_s])), cpuPerRun });
      }
    }
  }
  return rows;
}

/** Each peer and tool mode with its row before Orka and its row after, if any, in the order measurePeers makes them. */
function peerRows(before: Row[], after: Row[]): PeerRows {
  const modes = PEERS.flatMap((peer) => TOOL_MODES.map((mode) => ({ peer, mode })));
  return modes.map(({ peer, mode }, i) => ({ peer, mode, rows: [before[i], after[i]].filter(Boolean) }));
}

/**
 * Orka's runs/s at each concurrency, and create → first model request, one Task at a time. The server
 * runs in its own process, as `orka serve` does, so that this driver's HTTP client does not share its
 * thread and its CPU can be read alone. The latency Tasks talk to the timed model in a process of its
 * own, which notes when each request arrives on the machine's wall clock.
 */
async function measureOrka(model: { url: string; pid: number }) {
  const watched = await startChildServer(join(import.meta.dirname, "timed-model.ts"));
  try {
    const orka = await startOrkaProcess("run", { ORKA_WORKER_SLOTS: String(BUSIEST) });
    try {
      return await measureOrkaWith(orka, model, watched.url, cpuOf(orka.pid, model.pid));
    } finally {
      await orka.close();
    }
  } finally {
    await watched.close();
  }
}

/**
 * The bare loop's runs/s, driven as Orka is: its processes with Orka's node flags, the same untimed Tasks
 * one at a time first, its CPU per run split as Orka's. A bare loop that cannot run is a row that says why.
 */
async function measureBareLoop(model: { url: string; pid: number }): Promise<Row> {
  const system = "the bare loop: Orka's stores, IPC and OpenAI client, every step durable, no logic (bench/bare-loop.ts)";
  return bareLoopRates(model, system).catch((err: Error) => ({ system, runsPerSecond: {}, note: `not run: ${err.message.split("\n")[0]}` }));
}

async function bareLoopRates(model: { url: string; pid: number }, system: string): Promise<Row> {
  const bare = await startBareLoop(model.url);
  try {
    const watch = await bare.watchTasks();
    try {
      for (let i = 0; i < LATENCY_WARM_UP + LATENCY_SAMPLES; i++) await watch.runTask(`warm-up-${i}`, "loop");
      const rates = await measureRates(watch, cpuOf(bare.pid, model.pid), { thread: "its stores, the group commit, the tool's HTTP call, HTTP and IPC" });
      return { system, ...rates };
    } finally {
      await watch.close();
    }
  } finally {
    await bare.close();
  }
}

/** Reads the CPU a server's process tree (`pid`: it, its main thread, its children) and the fake model (`modelPid`) have used. */
function cpuOf(pid: number, modelPid: number): () => CpuSeconds {
  return () => {
    const usage = processTreeUsage(pid);
    return { tree: usage.cpuSeconds, server: usage.rootCpuSeconds, serverThread: mainThreadCpuSeconds(pid), model: processTreeUsage(modelPid).rootCpuSeconds };
  };
}

type CpuSeconds = { tree: number; server: number; serverThread: number; model: number };
/** A server's CPU per run in ms (Orka's or the bare loop's): its process (and the main thread of it), its worker processes, and the fake model they call. */
type ServerCpu = { server: number; serverThread: number; workers: number; model: number };

async function measureOrkaWith(orka: ReturnType<typeof adminClient>, model: { url: string }, watchedURL: string, cpuNow: () => CpuSeconds) {
  await declareLoop(orka, model.url, { loop: model.url, watched: watchedURL });
  const watch = await orka.watchTasks();
  try {
    return await measureRuns(watch, watchedURL, cpuNow);
  } finally {
    await watch.close();
  }
}

/** Each Task is created through the API and followed to its end on the one watch of the namespace's Tasks. */
async function measureRuns(orka: { runTask(name: string, agent: string): Promise<void> }, watchedURL: string, cpuNow: () => CpuSeconds) {
  // Untimed Tasks first, as many as before the floor's: the worker processes load their modules on their first attempt.
  for (let i = 0; i < LATENCY_WARM_UP; i++) await orka.runTask(`warm-up-${i}`, "watched");
  const created = new Map<string, number>();
  for (let i = 0; i < LATENCY_SAMPLES; i++) {
    created.set(`latency-${i}`, performance.timeOrigin + performance.now());
    await orka.runTask(`latency-${i}`, "watched");
  }
  const firstRequests = (await takeNoted(watchedURL)).filter((note) => note.kind === "model" && note.turn === 0 && created.has(note.conversation));
  if (firstRequests.length !== LATENCY_SAMPLES) throw new Error(`the timed model heard ${firstRequests.length} of ${LATENCY_SAMPLES} latency Tasks' first requests`);
  const latencies = firstRequests.map((note) => note.arrivedAt - created.get(note.conversation)!);
  const rates = await measureRates(orka, cpuNow, { thread: "API, controller, journal, every worker request's checks; the rest is garbage collection, checkpoints, the thread pool" });
  return { row: { system: "Orka (API create → Succeeded, every step durable)", ...rates }, latency: percentiles(latencies) };
}

/** Runs/s at each concurrency, each Task created through the API and followed to its end on one watch; the CPU per run at the busiest, split, with what its server's main thread does. */
async function measureRates(system: { runTask(name: string, agent: string): Promise<void> }, cpuNow: () => CpuSeconds, what: { thread: string }) {
  const runsPerSecond: Record<number, number> = {};
  let cpuPerRun: Row["cpuPerRun"];
  for (const { runs, concurrency } of PAIRS) {
    let started = 0;
    const cpu0 = cpuNow();
    const t0 = performance.now();
    await Promise.all(Array.from({ length: concurrency }, async () => {
      while (started < runs) await system.runTask(`loop-${concurrency}-${started++}`, "loop");
    }));
    runsPerSecond[concurrency] = +((runs / (performance.now() - t0)) * 1000).toFixed(1);
    if (concurrency === BUSIEST) cpuPerRun = cpuSplit(cpu0, cpuNow(), runs, what);
  }
  return { runsPerSecond, cpuPerRun };
}

/** A server's CPU per run between two readings: its process (and the main thread of it), its worker processes, and the fake model it calls. */
function cpuSplit(before: CpuSeconds, after: CpuSeconds, runs: number, what: { thread: string }): Row["cpuPerRun"] {
  const perRun = (seconds: number) => (seconds * 1000) / runs;
  const server = perRun(after.server - before.server);
  const split = { server, serverThread: perRun(after.serverThread - before.serverThread), workers: perRun(after.tree - before.tree) - server, model: perRun(after.model - before.model) };
  const parts =
    `server process ${split.server.toFixed(2)}, of which its main thread ${split.serverThread.toFixed(2)} (${what.thread}), ` +
    `worker processes ${split.workers.toFixed(2)} (the loop, the OpenAI SDK); the fake model ${split.model.toFixed(2)} more (four answers and three tool calls)`;
  return { ms: +(split.server + split.workers).toFixed(2), parts, split };
}

/**
 * What the server may spend per run for Orka to reach `times` a peer's rate at the busiest concurrency: of
 * what this machine's cores give per run at that rate, what its worker processes and the fake model leave,
 * and never more than one thread's worth (its JavaScript runs on one), as a sentence beside what it used.
 */
function serverBudget(peer: string, rows: Row[], times: number, orka: ServerCpu): string | undefined {
  const rate = Math.max(...rows.map((row) => row.runsPerSecond[BUSIEST] ?? 0));
  if (!rate) return undefined;
  const target = rate * times;
  const perRun = (cpus().length * 1000) / target;
  const left = Math.min(perRun - orka.workers - orka.model, 1000 / target);
  return `${times}× ${peer} (its faster run: ${rate} runs/s): at ${target.toFixed(0)} runs/s the ${cpus().length} cores give ${perRun.toFixed(2)} ms of CPU per run; ` +
    `Orka's worker processes and the fake model take ${(orka.workers + orka.model).toFixed(2)}, and one thread has ${(1000 / target).toFixed(2)}: the server may spend ${left.toFixed(2)} ms ` +
    `(it used ${orka.server.toFixed(2)}, its main thread ${orka.serverThread.toFixed(2)}; this driver's own CPU is not counted against it).`;
}

/** What Orka's logic cost per run beyond the bare loop's, at the busiest concurrency, where it was spent. */
function logicCost(orka: ServerCpu, bare: ServerCpu): string {
  const beyond = (part: keyof ServerCpu) => {
    const more = orka[part] - bare[part];
    return `${orka[part].toFixed(2)} against ${bare[part].toFixed(2)} (${Math.abs(more).toFixed(2)} ${more < 0 ? "less" : "more"})`;
  };
  return `What Orka's logic cost per run at concurrency ${BUSIEST}, beyond the bare loop's, in ms of CPU: the server process ${beyond("server")}, its main thread ${beyond("serverThread")}; the worker processes ${beyond("workers")}.`;
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
  const orka = await measureOrka(model);
  const bare = await measureBareLoop(model);
  // A quick run measures the peers once, to stay under a minute.
  const after = QUICK ? [] : await measurePeers(peersDir, model.port, "after Orka");
  const peers = peerRows(before, after);
  const rows = [orka.row, bare, ...peers.flatMap(({ rows }) => rows)];
  console.log(`${QUICK ? "Quick run" : "Run"}: ${PAIRS.map((p) => `${p.runs} runs at concurrency ${p.concurrency}`).join(", ")}; ${LATENCY_SAMPLES} Tasks one at a time, after ${LATENCY_WARM_UP} untimed ones, for the latency. ` +
    "Orka's server runs in its own process; each Task is created through the API and followed to its end on one watch of the namespace's Tasks. " +
    `Node ${process.version}, ${cpus().length} × ${cpus()[0]?.model.trim()}, load average ${loadAtStart.toFixed(1)} when the run started. ` +
    `Then ${FIGURE_GROUPS.map((script) => `bench/${script}`).join(", ")}${QUICK ? ", each reduced too" : ""}.\n`);
  console.log(table(rows, orka.row, orka.latency));
  console.log(`\nCPU time per run at concurrency ${BUSIEST} (user + system, from /proc and process.cpuUsage; this driver's HTTP client not counted). ` +
    `On ${cpus().length} cores a system cannot exceed ${cpus().length} × 1000 ÷ its CPU per run runs/s, nor 1000 ÷ the CPU per run of its busiest single thread.\n`);
  console.log(markdownTable(["system", "CPU per run, ms", "where"], rows.filter((row) => row.cpuPerRun).map((row) => [row.system, row.cpuPerRun!.ms.toFixed(2), row.cpuPerRun!.parts])));
  const split = orka.row.cpuPerRun?.split;
  const budgets = split ? peers.map(({ peer, mode, rows }) => serverBudget(`${peer.name}, ${mode.label}`, rows, peer.goal, split)).filter(Boolean) : [];
  if (budgets.length) console.log(`\nThe server's budget per run at the performance goals (compare the floor under it, bench/floor.ts below):\n${budgets.map((line) => `- ${line}`).join("\n")}`);
  const bareSplit = bare.cpuPerRun?.split;
  if (split && bareSplit) console.log(`\n${logicCost(split, bareSplit)}`);
} finally {
  await model.close();
}
for (const script of FIGURE_GROUPS) await runFigureGroup(script);
console.log(`\nThe run took ${(performance.now() / 1000).toFixed(0)} s; load average ${loadavg()[0].toFixed(1)} when it ended.`);
