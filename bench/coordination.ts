// delegate → child end → parent wake: a parent Task whose model calls delegate_task (a child whose model
// answers at once), then wait_for_tasks on that child; measured from the child's final answer (its last
// model answer sent) to the parent's next model request (arrived), which carries wait_for_tasks' result,
// both on the timed model's clock. Parents one at a time, created through the API.
// `node bench/coordination.ts [--quick]` prints one table; asserts nothing.
import { join } from "node:path";
import { startChildServer } from "./child-server.ts";
import { startOrkaProcess } from "./server.ts";
import { markdownTable, p50p95 } from "./table.ts";
import { childPrompt, takeNoted, type Noted } from "./timed-model.ts";
import { percentiles } from "./timing.ts";

const QUICK = process.argv.includes("--quick");
const PARENTS = QUICK ? 3 : 20;

interface Wake {
  /** Child's final answer sent → the parent's request carrying wait_for_tasks' result arrived. */
  ms: number;
  /** The parent's wait_for_tasks had been asked for before the child's final answer left. */
  waitingFirst: boolean;
}

function wakeOf(noted: Noted[], parent: string): Wake {
  const turn = (n: number) => noted.find((note) => note.kind === "model" && note.conversation === parent && note.turn === n);
  const childAnswers = noted.filter((note) => note.kind === "model" && note.conversation.includes(childPrompt(parent)));
  const [askedToWait, woken] = [turn(1), turn(2)];
  if (!askedToWait || !woken || childAnswers.length === 0) throw new Error(`${parent}: the timed model did not see its child's answer and its wake`);
  const childEnd = Math.max(...childAnswers.map((note) => note.answeredAt));
  return { ms: woken.arrivedAt - childEnd, waitingFirst: askedToWait.answeredAt < childEnd };
}

const model = await startChildServer(join(import.meta.dirname, "timed-model.ts"));
const orka = await startOrkaProcess("coordination");
try {
  await orka.api("POST", "/secrets", { name: "key", stringData: { "api-key": "k" } });
  await orka.api("POST", "/providers", { metadata: { name: "timed" }, spec: { type: "openai", baseURL: `${model.url}/v1`, secretRef: { name: "key" } } });
  // The model name picks the timed model's script: the parent delegates and waits, the child answers.
  await orka.api("POST", "/agents", { metadata: { name: "parent" }, spec: { providerRef: { name: "timed" }, model: { name: "delegate" }, coordination: { enabled: true, allowedAgents: [{ name: "child" }] } } });
  await orka.api("POST", "/agents", { metadata: { name: "child" }, spec: { providerRef: { name: "timed" }, model: { name: "answer" } } });
  // One untimed parent first: the worker processes load their modules on their first attempt.
  await orka.runTask("warm-up", "parent");
  for (let i = 0; i < PARENTS; i++) await orka.runTask(`parent-${i}`, "parent");
  const noted = await takeNoted(model.url);
  const wakes = Array.from({ length: PARENTS }, (_, i) => wakeOf(noted, `parent-${i}`));
  console.log(`\ndelegate → child end → parent wake: ${PARENTS} parents one at a time, after a warm-up parent (the model answers at once). ` +
    "From the child's final model answer (sent) to the parent's next model request (arrived), which carries wait_for_tasks' result.\n");
  console.log(markdownTable(["measure", "parents", "p50 / p95 ms", "parent already in wait_for_tasks when the child answered"], [
    ["child's final answer → parent's next model request", String(PARENTS), p50p95(percentiles(wakes.map((w) => w.ms))), `${wakes.filter((w) => w.waitingFirst).length} of ${PARENTS}`],
  ]));
} finally {
  await orka.close();
  model.close();
}
