// Many concurrent Tasks against a slow model: 1,000 Tasks (200 with --quick) created through the API at
// once, each the 3-tool-call loop of bench/peers/ against a fake model whose every answer takes 1 s (the
// tool answers at once), so a Task cannot end in less than 4 s: that is the ideal drain time. The Orka
// server runs in its own process (`node --max-semi-space-size=8 src/cli/main.ts serve`, as bin/orka starts it, freshly started, with one worker slot per
// Task), so that its process tree can be measured alone from /proc every 100 ms: peak resident memory of
// the server and all its descendants, and their CPU time during the drain. The fake model and this driver
// are not counted. `node bench/drain.ts [--quick]` prints one table; asserts nothing.
import { rmSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { isTerminalPhase } from "../src/resources/task.ts";
import { startChildServer } from "./child-server.ts";
import { processTreeUsage } from "./process-tree.ts";
import { adminClient, benchDirectory, startServerProcess, stopServerProcess } from "./server.ts";
import { markdownTable } from "./table.ts";

const QUICK = process.argv.includes("--quick");
const TASKS = QUICK ? 100 : 1000;
const ANSWER_DELAY_MS = 1000;
const IDEAL_MS = 4 * ANSWER_DELAY_MS;
const SAMPLE_EVERY_MS = 100;
const DRAIN_DEADLINE_MS = 180_000;
const POLL_EVERY_MS = 1000;

const phasesOf = (tasks: { status?: { phase?: string } }[]) =>
  Object.entries(Object.groupBy(tasks, (task) => task.status?.phase ?? "Pending")).map(([phase, group]) => [phase, group!.length] as const);

const dir = benchDirectory("drain");
const model = await startChildServer(join(import.meta.dirname, "peers", "fake-model.ts"), [String(ANSWER_DELAY_MS)]);
const server = await startServerProcess(dir, { ORKA_WORKER_SLOTS: String(TASKS) });
const peak = { rssBytes: 0, processes: 0 };
let treePids: number[] = [];
const sampler = setInterval(() => {
  const usage = processTreeUsage(server.pid);
  if (usage.rssBytes > peak.rssBytes) Object.assign(peak, { rssBytes: usage.rssBytes, processes: usage.pids.length });
  treePids = usage.pids;
}, SAMPLE_EVERY_MS);
try {
  const orka = adminClient(server.url);
  await orka.api("POST", "/secrets", { name: "key", stringData: { "api-key": "k" } });
  await orka.api("POST", "/tools", { metadata: { name: "noop" }, spec: { description: "no-op", parameters: { type: "object", properties: { n: { type: "number" } } }, http: { url: `${model.url}/noop` } } });
  await orka.api("POST", "/providers", { metadata: { name: "slow" }, spec: { type: "openai", baseURL: `${model.url}/v1`, secretRef: { name: "key" }, defaultModel: "fake" } });
  await orka.api("POST", "/agents", { metadata: { name: "slow" }, spec: { providerRef: { name: "slow" }, systemPrompt: { inline: "x" }, tools: [{ name: "noop" }] } });

  const cpuBefore = processTreeUsage(server.pid).cpuSeconds;
  const firstCreate = Date.now();
  const creates = await Promise.allSettled(Array.from({ length: TASKS }, (_, i) => orka.api("POST", "/tasks", { name: `drain-${i}`, type: "ai", agentRef: "slow", prompt: `drain-${i}` })));
  const allCreated = Date.now();
  const refused = creates.filter((create) => create.status === "rejected");
  if (refused.length > 0) console.log(`\n${refused.length} creates failed; the first: ${(refused[0].reason as Error).message}`);
  let tasks: { metadata: { name: string }; status?: { phase?: string; completionTime?: string; message?: string } }[] = [];
  let allEnded = false;
  for (const deadline = firstCreate + DRAIN_DEADLINE_MS; !allEnded && Date.now() < deadline; await sleep(POLL_EVERY_MS)) {
    tasks = (await orka.api("GET", "/tasks?limit=0")).items;
    allEnded = tasks.length === TASKS - refused.length && tasks.every((task) => isTerminalPhase(task.status?.phase));
  }
  const ended = Date.now();
  const cpu = processTreeUsage(server.pid).cpuSeconds - cpuBefore;
  const succeeded = tasks.filter((task) => task.status?.phase === "Succeeded");
  const drained = succeeded.length === TASKS;
  const drainMs = Math.max(...succeeded.map((task) => Date.parse(task.status!.completionTime!))) - firstCreate;
  console.log(`\n${TASKS} concurrent Tasks${QUICK ? " (quick run; the full run has 1,000)" : ""}, each the 3-tool-call loop against a model that answers in ${ANSWER_DELAY_MS} ms: ` +
    `ideal drain ${IDEAL_MS / 1000} s (four model answers per Task). Orka server in its own process, freshly started, ORKA_WORKER_SLOTS=${TASKS}; ` +
    `all ${TASKS} created through the API at once (the last create answered ${((allCreated - firstCreate) / 1000).toFixed(1)} s after the first was sent). ` +
    `Peak RSS and CPU: the server's process tree from /proc every ${SAMPLE_EVERY_MS} ms (not the fake model, not this driver; RSS summed over its processes, so a page they share counts in each); CPU over first create → all ended (${((ended - firstCreate) / 1000).toFixed(1)} s), in % of one core.\n`);
  console.log(markdownTable(["Tasks", "ended by phase", "drain: first create → last Succeeded", "÷ ideal 4 s", "peak RSS of Orka's process tree", "Orka's CPU during the drain"], [[
    String(TASKS),
    phasesOf(tasks).map(([phase, count]) => `${phase} ${count}`).join(", ") + (allEnded ? "" : ` (not all ended after ${DRAIN_DEADLINE_MS / 1000} s)`),
    succeeded.length ? `${(drainMs / 1000).toFixed(1)} s${drained ? "" : " (not all Succeeded)"}` : "–",
    drained ? `${(drainMs / IDEAL_MS).toFixed(2)}×` : "–",
    `${(peak.rssBytes / 2 ** 20).toFixed(0)} MiB (${peak.processes} processes)`,
    `${cpu.toFixed(1)} s, ${((cpu / ((ended - firstCreate) / 1000)) * 100).toFixed(0)}% of one core`,
  ]]));
  const unsuccessful = tasks.filter((task) => task.status?.phase !== "Succeeded");
  for (const [message, group] of Object.entries(Object.groupBy(unsuccessful, (task) => `${task.status?.phase ?? "Pending"}: ${task.status?.message ?? "no message"}`))) {
    // Where one of them stopped: its events in order, with the seconds since the first create.
    const { events } = await orka.api("GET", `/tasks/${group![0].metadata.name}/events?limit=500`);
    const trail = events.map((event: { type: string; createdAt: string }) => `${event.type} ${((Date.parse(event.createdAt) - firstCreate) / 1000).toFixed(1)}`);
    console.log(`\n${group!.length} × ${message}\n  events of ${group![0].metadata.name} (s after the first create): ${trail.join(", ")}`);
  }
} finally {
  clearInterval(sampler);
  await stopServerProcess(server, treePids);
  model.close();
  rmSync(dir, { recursive: true, force: true });
}
