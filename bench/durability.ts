// npm run bench: crash-exact durability figures (prints, asserts nothing).
//  1. Bytes journalled per step for a 100-tool-call run that starts from a long conversation,
//     beside what re-copying the whole conversation at every step would cost.
//  2. Recovery after kill -9 of the server in the middle of a run: restart → listening,
//     → the attempt resumed from its journal, → Succeeded.
import Database from "better-sqlite3";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stringify } from "yaml";
import { serverConfigFrom } from "../src/config.ts";
import { startOrka } from "../src/server.ts";
import { startOrkaWithPeer } from "../test/helpers/orka-with-peer.ts";

const CALLS = 100;
const CALLS_PER_TURN = 10;
const PROMPT_BYTES = 200_000;
const RECOVERY_RUNS = Number(process.env.BENCH_RECOVERY_RUNS ?? 5);
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

async function bytesPerStep(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "orka-bench-journal-"));
  const orka = await startOrka({
    ...serverConfigFrom({ ORKA_PORT: "0", ORKA_DATA_DIR: dir, ORKA_ADMIN_TOKEN: "bench-admin-token-0000", ORKA_LOG_LEVEL: "silent" }, dir),
    workerProcesses: 1,
    cliConfigPath: "",
  });
  try {
    const turns = [
      ...Array.from({ length: CALLS / CALLS_PER_TURN }, (_, t) => ({
        toolCalls: Array.from({ length: CALLS_PER_TURN }, (_, i) => ({ name: "recall_memory", arguments: { query: `note ${t * CALLS_PER_TURN + i}` } })),
      })),
      { text: "done" },
    ];
    const headers = { authorization: "Bearer bench-admin-token-0000", "content-type": "application/json" };
    const post = (path: string, body: unknown) => fetch(`${orka.url}/api/v1/${path}`, { method: "POST", headers, body: JSON.stringify(body) });
    await post("providers", { metadata: { name: "script" }, spec: { type: "scripted", scripted: { turns } } });
    await post("agents", { metadata: { name: "long" }, spec: { providerRef: { name: "script" }, coordination: { enabled: true } } });
    const prompt = `Earlier conversation:\n${"The quick brown fox jumps over the lazy dog. ".repeat(PROMPT_BYTES / 45)}\nNow recall the notes.`;
    await post("tasks", { name: "long-run", type: "ai", agentRef: "long", prompt });
    for (let i = 0; i < 600; i++) {
      const task = (await (await fetch(`${orka.url}/api/v1/tasks/long-run`, { headers })).json()) as { status?: { phase?: string } };
      if (task.status?.phase === "Succeeded" || task.status?.phase === "Failed") break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const db = new Database(join(dir, "orka.db"), { readonly: true });
    const steps = db.prepare("SELECT seq, kind, length(segments) + length(detail) AS meta FROM journal_steps WHERE task = 'long-run' ORDER BY seq").all() as { seq: number; kind: string; meta: number }[];
    const segments = (db.prepare("SELECT sum(length(body)) AS bytes FROM journal_segments WHERE task = 'long-run'").get() as { bytes: number }).bytes;
    const metaBytes = steps.reduce((sum, s) => sum + s.meta, 0);
    const total = segments + metaBytes;
    // What a full snapshot of the conversation at every step would write instead.
    let conversation = 0;
    let snapshots = 0;
    const perStep = db.prepare("SELECT s.seq AS seq, coalesce(sum(length(g.body)), 0) AS bytes FROM journal_steps s LEFT JOIN json_each(s.segments) j LEFT JOIN journal_segments g ON g.task = s.task AND g.hash = j.value WHERE s.task = 'long-run' GROUP BY s.seq ORDER BY s.seq").all() as { seq: number; bytes: number }[];
    for (const step of perStep) {
      conversation += step.bytes;
      snapshots += conversation;
    }
    const afterFirst = perStep.slice(1).map((s, i) => s.bytes + steps[i + 1].meta);
    db.close();
    console.log(JSON.stringify({
      bench: `journal bytes for a ${CALLS}-tool-call run starting from a ${Math.round(PROMPT_BYTES / 1000)} KB conversation`,
      steps: steps.length,
      total_bytes: total,
      first_step_bytes: perStep[0].bytes + steps[0].meta,
      later_steps_median_bytes: median(afterFirst),
      later_steps_max_bytes: Math.max(...afterFirst),
      full_snapshot_per_step_bytes: snapshots,
      ratio: Number((snapshots / total).toFixed(1)),
    }));
  } finally {
    await orka.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function recoveryAfterKill(): Promise<void> {
  const { orka, peer, stop } = await startOrkaWithPeer(stringify({ apiVersion: "core.orka.ai/v1alpha1", kind: "Agent", metadata: { name: "slow" }, spec: { providerRef: { name: "peer" }, model: { name: "m-slow" } } }));
  const listening: number[] = [];
  const resumed: number[] = [];
  const succeeded: number[] = [];
  try {
    peer.script("m-slow", [{ toolCalls: [{ name: "recall_memory", arguments: { query: "x" } }] }, { text: "done" }]);
    for (let run = 0; run < RECOVERY_RUNS; run++) {
      const name = `slow-${run}`;
      // The model takes 800 ms per turn: the server dies while the first turn is out.
      peer.setDelay(800, "m-slow");
      await orka.api("POST", "/api/v1/tasks", { name, type: "ai", agentRef: "slow", prompt: `run ${run}` });
      await orka.waitFor(name, ["Running"], 10_000);
      await new Promise((r) => setTimeout(r, 300));
      peer.setDelay(0, "m-slow");
      await orka.kill();
      const start = performance.now();
      await orka.restart();
      listening.push(performance.now() - start);
      for (let i = 0; i < 400; i++) {
        const events = (await orka.api("GET", `/api/v1/tasks/${name}/events?type=AttemptResumed`)).body.events;
        if (events.length > 0) break;
        await new Promise((r) => setTimeout(r, 10));
      }
      resumed.push(performance.now() - start);
      await orka.waitFor(name, ["Succeeded"], 20_000);
      succeeded.push(performance.now() - start);
    }
    const ms = (values: number[]) => Math.round(median(values));
    console.log(JSON.stringify({
      bench: "recovery after kill -9 of the server mid-run (median)",
      runs: RECOVERY_RUNS,
      restart_to_listening_ms: ms(listening),
      restart_to_attempt_resumed_ms: ms(resumed),
      restart_to_succeeded_ms: ms(succeeded),
    }));
  } finally {
    await stop();
  }
}

await bytesPerStep();
await recoveryAfterKill();
