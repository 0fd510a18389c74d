// Many concurrent Tasks against a slow model: 1,000 Tasks (100 with --quick) created through the API at
// once, each the 3-tool-call loop of bench/peers/ against a fake model whose every answer takes 1 s (the
// tool answers at once), so a Task cannot end in less than 4 s: that is the ideal drain time. The Orka
// server runs in its own process, as bin/orka starts it, freshly started, with one worker slot per Task;
// every Task's end is heard on one watch of the namespace's Tasks. Its process tree is measured alone from
// /proc every 100 ms: peak resident memory of the server and all its descendants, and their CPU time
// during the drain, split into the server (and its main thread) and its worker processes, beside the fake
// model's and this driver's; from these, what the server may spend per Task for the drain to end within
// 1.5× the ideal. Then the same loops, all at once, through the bare loop (bench/bare-loop.ts: Orka's
// stores, IPC and OpenAI client, every step durable, no logic), which shows what a durable loop built of
// Orka's pieces can do here, and in each in-process peer. `node bench/drain.ts [--quick]` prints its
// tables (a quick run leaves the peers out); asserts nothing.
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { isTerminalPhase } from "../src/resources/task.ts";
import { startChildServer } from "./child-server.ts";
import { cpus } from "node:os";
import { mainThreadCpuSeconds, processTreeUsage } from "./process-tree.ts";
import { PEERS, preparePeers, runPeer } from "./peers/peers.ts";
import { declareLoop, startBareLoop, startOrkaProcess } from "./server.ts";
import { markdownTable } from "./table.ts";
import { percentiles } from "./timing.ts";

const QUICK = process.argv.includes("--quick");
const TASKS = QUICK ? 100 : 1000;
const ANSWER_DELAY_MS = 1000;
const IDEAL_MS = 4 * ANSWER_DELAY_MS;
const SAMPLE_EVERY_MS = 100;
const DRAIN_DEADLINE_MS = 180_000;
/** The Tasks of a drain, Orka's and the bare loop's alike. */
const TASK_NAMES = Array.from({ length: TASKS }, (_, i) => `drain-${i}`);

/** CPU seconds spent over the drain, as ms per Task. */
const msPerTask = (seconds: number) => ((seconds * 1000) / TASKS).toFixed(2);

const phasesOf = (tasks: { status?: { phase?: string } }[]) =>
  Object.entries(Object.groupBy(tasks, (task) => task.status?.phase ?? "Pending")).map(([phase, group]) => [phase, group!.length] as const);

/** CPU seconds so far: the server's process tree, the server process, its main thread, the fake model, this driver. */
function cpuNow(serverPid: number, modelPid: number) {
  const tree = processTreeUsage(serverPid);
  const driver = process.cpuUsage();
  return {
    tree: tree.cpuSeconds,
    server: tree.rootCpuSeconds,
    serverThread: mainThreadCpuSeconds(serverPid),
    model: processTreeUsage(modelPid).rootCpuSeconds,
    driver: (driver.user + driver.system) / 1e6,
  };
}

type CpuSeconds = ReturnType<typeof cpuNow>;

function cpuSince(before: CpuSeconds, serverPid: number, modelPid: number): CpuSeconds {
  const now = cpuNow(serverPid, modelPid);
  return Object.fromEntries(Object.entries(now).map(([part, seconds]) => [part, seconds - before[part as keyof CpuSeconds]])) as CpuSeconds;
}

/**
 * Where the drain's CPU went, per Task, and what the server could spend for the drain to end within the
 * goal (1.5× the ideal): the machine's cores over that time, less what the worker processes, the fake
 * model and this driver took, and never more than that time (the server's JavaScript runs on one thread).
 */
function drainBudget(used: CpuSeconds): string {
  const goalSeconds = (1.5 * IDEAL_MS) / 1000;
  const workers = used.tree - used.server;
  const budget = Math.min(cpus().length * goalSeconds - workers - used.model - used.driver, goalSeconds);
  return `CPU per Task during the drain, ms: the server process ${msPerTask(used.server)} (its main thread ${msPerTask(used.serverThread)}), ` +
    `its worker processes ${msPerTask(workers)}, the fake model ${msPerTask(used.model)}, this driver (its creates, its watch, its /proc sampling) ${msPerTask(used.driver)}. ` +
    `To drain in 1.5× the ideal (${goalSeconds} s), the ${cpus().length} cores give ${cpus().length * goalSeconds} s; what the worker processes, the fake model and this driver took leaves the server's ` +
    `whole process (its main thread, its garbage collection and helper threads) at most ${msPerTask(Math.max(budget, 0))} ms per Task. The floor under its work per run (bench/floor.ts) is ` +
    "main-thread time alone, so comparing the two favours the goal.";
}

/**
 * The same loops against the same model in each in-process peer: all of them at once in the peer's one
 * process, timed from the first start to the last end; nothing durable. The peers start cold, as Orka's
 * freshly started server does: a warm-up loop would wait 4 s on the slow model for what is small beside
 * the 4 s every loop waits.
 */
async function peersDraining(modelPort: string): Promise<string[][]> {
  const dir = await preparePeers().catch((err: Error) => err);
  const rows: string[][] = [];
  for (const peer of PEERS) {
    const figure = dir instanceof Error ? dir : await runPeer(dir, peer.script, modelPort, [{ runs: TASKS, concurrency: TASKS }], { warmUp: false }).then(([f]) => f, (err: Error) => err);
    if (figure instanceof Error) rows.push([peer.name, `not run: ${figure.message.split("\n")[0]}`, "", ""]);
    else rows.push([peer.name, `${(TASKS / figure.runs_per_s).toFixed(1)} s`, `${(TASKS / figure.runs_per_s / (IDEAL_MS / 1000)).toFixed(2)}×`, figure.cpu_ms_per_run.toFixed(2)]);
  }
  return rows;
}

/**
 * The same Tasks through the bare loop, created at once and heard ending on its watch: what a loop that
 * journals every step through Orka's stores and processes, with nothing else, takes to drain them here.
 * Timed to the last end heard (the bare server keeps no list to read completion times from), which counts
 * the watch's last frame against it. A bare loop that cannot run, or a Task that does not Succeed, is a row
 * that says so.
 */
async function bareLoopDraining(model: { url: string; pid: number }): Promise<string[]> {
  const system = "the bare loop (Orka's stores, IPC and OpenAI client, every step durable, no logic)";
  const bare = await startBareLoop(model.url).catch((err: Error) => err);
  if (bare instanceof Error) return [system, `not run: ${bare.message.split("\n")[0]}`, "", ""];
  try {
    const watch = await bare.watchTasks();
    const ends = TASK_NAMES.map((name) => watch.ended(name));
    const cpuBefore = cpuNow(bare.pid, model.pid);
    const firstCreate = Date.now();
    await Promise.all(TASK_NAMES.map((name) => bare.api("POST", "/tasks", { name, prompt: name })));
    const allCreated = Date.now();
    const phases = await Promise.race([Promise.all(ends), sleep(DRAIN_DEADLINE_MS, undefined, { ref: false })]);
    const drainMs = Date.now() - firstCreate;
    const used = cpuSince(cpuBefore, bare.pid, model.pid);
    await watch.close();
    const failed = phases ? phases.filter((end) => end.phase !== "Succeeded").length : TASKS;
    if (failed > 0) return [system, phases ? `${failed} of ${TASKS} did not Succeed` : `not all ended after ${DRAIN_DEADLINE_MS / 1000} s`, "", ""];
    return [system, `${(drainMs / 1000).toFixed(1)} s (the last create answered after ${((allCreated - firstCreate) / 1000).toFixed(1)} s)`, `${(drainMs / IDEAL_MS).toFixed(2)}×`,
      `${msPerTask(used.tree)} (its server ${msPerTask(used.server)}, its worker ${msPerTask(used.tree - used.server)}; the fake model ${msPerTask(used.model)})`];
  } catch (err) {
    return [system, `not run to its end: ${(err as Error).message.split("\n")[0]}`, "", ""];
  } finally {
    await bare.close();
  }
}

/** The drain itself: Orka's server in its own process, the Tasks created at once and heard ending on one watch; prints its tables. */
async function drainOrka(model: { url: string; pid: number }): Promise<void> {
  const orka = await startOrkaProcess("drain", { ORKA_WORKER_SLOTS: String(TASKS) });
  const peak = { rssBytes: 0, processes: 0 };
  const sampler = setInterval(() => {
    const usage = processTreeUsage(orka.pid);
    if (usage.rssBytes > peak.rssBytes) Object.assign(peak, { rssBytes: usage.rssBytes, processes: usage.pids.length });
  }, SAMPLE_EVERY_MS);
  try {
    await declareLoop(orka, model.url, { slow: model.url });

    const watch = await orka.watchTasks();
    // Each Task's end is heard on the one watch, as a client running many Tasks hears it.
    const deadline = sleep(DRAIN_DEADLINE_MS, undefined, { ref: false }).then(() => ({ gone: `not ended after ${DRAIN_DEADLINE_MS / 1000} s` }));
    const ends = TASK_NAMES.map((name) => Promise.race([watch.ended(name), deadline]));
    const cpuBefore = cpuNow(orka.pid, model.pid);
    const firstCreate = Date.now();
    const creates = await Promise.allSettled(TASK_NAMES.map((name) => orka.api("POST", "/tasks", { name, type: "ai", agentRef: "slow", prompt: name })));
    const allCreated = Date.now();
    const refused = creates.filter((create) => create.status === "rejected");
    if (refused.length > 0) console.log(`\n${refused.length} creates failed; the first: ${(refused[0].reason as Error).message}`);
    await Promise.all(ends.filter((_, i) => creates[i].status === "fulfilled"));
    const ended = Date.now();
    const used = cpuSince(cpuBefore, orka.pid, model.pid);
    const cpu = used.tree;
    await watch.close();
    const tasks: { metadata: { name: string; creationTimestamp: string }; status?: { phase?: string; completionTime?: string; message?: string } }[] = (await orka.api("GET", "/tasks?limit=0")).items;
    const allEnded = tasks.every((task) => isTerminalPhase(task.status?.phase));
    const succeeded = tasks.filter((task) => task.status?.phase === "Succeeded");
    const drained = succeeded.length === TASKS;
    const drainMs = Math.max(...succeeded.map((task) => Date.parse(task.status!.completionTime!))) - firstCreate;
    // What each Task's creator waited: how far a burst being admitted holds up the Tasks already in it.
    const ownTimes = percentiles(succeeded.map((task) => Date.parse(task.status!.completionTime!) - Date.parse(task.metadata.creationTimestamp)));
    console.log(`\n${TASKS} concurrent Tasks${QUICK ? " (quick run; the full run has 1,000)" : ""}, each the 3-tool-call loop against a model that answers in ${ANSWER_DELAY_MS} ms: ` +
      `ideal drain ${IDEAL_MS / 1000} s (four model answers per Task). Orka server in its own process, freshly started, ORKA_WORKER_SLOTS=${TASKS}; ` +
      `all ${TASKS} created through the API at once (the last create answered ${((allCreated - firstCreate) / 1000).toFixed(1)} s after the first was sent). ` +
      `Peak RSS and CPU: the server's process tree from /proc every ${SAMPLE_EVERY_MS} ms (not the fake model, not this driver; RSS summed over its processes, so a page they share counts in each); CPU over first create → all ended (${((ended - firstCreate) / 1000).toFixed(1)} s), in % of one core.\n`);
    console.log(markdownTable(["Tasks", "ended by phase", "drain: first create → last Succeeded", "÷ ideal 4 s", "each Task, created → Succeeded, p50 / p95", "peak RSS of Orka's process tree", "Orka's CPU during the drain"], [[
      String(TASKS),
      phasesOf(tasks).map(([phase, count]) => `${phase} ${count}`).join(", ") + (allEnded ? "" : ` (not all ended after ${DRAIN_DEADLINE_MS / 1000} s)`),
      succeeded.length ? `${(drainMs / 1000).toFixed(1)} s${drained ? "" : " (not all Succeeded)"}` : "–",
      drained ? `${(drainMs / IDEAL_MS).toFixed(2)}×` : "–",
      succeeded.length ? `${(ownTimes.p50_ms / 1000).toFixed(1)} / ${(ownTimes.p95_ms / 1000).toFixed(1)} s` : "–",
      `${(peak.rssBytes / 2 ** 20).toFixed(0)} MiB (${peak.processes} processes)`,
      `${cpu.toFixed(1)} s, ${((cpu / ((ended - firstCreate) / 1000)) * 100).toFixed(0)}% of one core`,
    ]]));
    console.log(`\n${drainBudget(used)}`);
    const unsuccessful = tasks.filter((task) => task.status?.phase !== "Succeeded");
    for (const [message, group] of Object.entries(Object.groupBy(unsuccessful, (task) => `${task.status?.phase ?? "Pending"}: ${task.status?.message ?? "no message"}`))) {
      // Where one of them stopped: its events in order, with the seconds since the first create.
      const { events } = await orka.api("GET", `/tasks/${group![0].metadata.name}/events?limit=500`);
      const trail = events.map((event: { type: string; createdAt: string }) => `${event.type} ${((Date.parse(event.createdAt) - firstCreate) / 1000).toFixed(1)}`);
      console.log(`\n${group!.length} × ${message}\n  events of ${group![0].metadata.name} (s after the first create): ${trail.join(", ")}`);
    }
  } finally {
    clearInterval(sampler);
    await orka.close();
  }
}

const model = await startChildServer(join(import.meta.dirname, "peers", "fake-model.ts"), [String(ANSWER_DELAY_MS)]);
try {
  await drainOrka(model);
  // A quick run leaves the peers out, to stay under a minute in all; the bare loop is its yardstick.
  const rows = [await bareLoopDraining(model), ...(QUICK ? [] : await peersDraining(model.port))];
  const peers = QUICK ? " (a quick run: not in the in-process peers)" : " and in each in-process peer (its one process, nothing durable)";
  console.log(`\nThe same ${TASKS} loops at once through the bare loop (durable, no logic; timed to the last end heard on its watch)${peers}, against the same model:\n`);
  console.log(markdownTable(["system", "all ended", "÷ ideal 4 s", "CPU per loop, ms"], rows));
} finally {
  model.close();
}
