// Per tool call overhead of the agent loop: the time from the model answer that asks for a tool (its last
// byte sent) to the next model request, which carries the tool's result (its arrival), both seen by the
// timed model on its own clock, minus the tool's own work where it is measurable: for an HTTP tool, its
// endpoint's handling time (request in → answer sent). Orka: a custom HTTP Tool and the built-in
// recall_memory (its work, a control-plane query of an empty memory store, is counted as overhead), Tasks
// created through the API one at a time, every step durable. Beside it, the bare loop (bench/bare-loop.ts:
// the same HTTP tool through Orka's stores, IPC and OpenAI client, every step durable, no logic), which is
// what a durable loop built of Orka's pieces leaves between two model turns here, and @openai/agents in
// process with the same loop: a function tool that does nothing, and one that calls the same HTTP endpoint.
// Under them all, Orka's OpenAI client alone: each tool's result handed back at once, nothing durable and no
// tool, so its gap is what the client and HTTP leave between two model turns, the part no loop using it can avoid.
// `node bench/tool-overhead.ts [--quick]` prints one table; asserts nothing.
import { join } from "node:path";
import type { ChatMessage } from "../src/providers/model.ts";
import { openAIModel } from "../src/providers/openai.ts";
import { startChildServer } from "./child-server.ts";
import { NOOP_TOOL } from "./peers/fake-model.ts";
import { preparePeers, runPeerScript } from "./peers/peers.ts";
import { startBareLoop, startOrkaProcess } from "./server.ts";
import { markdownTable, p50p95 } from "./table.ts";
import { takeNoted, type Noted } from "./timed-model.ts";
import { percentiles } from "./timing.ts";

const QUICK = process.argv.includes("--quick");
const LOOPS = QUICK ? 5 : 50;
const CALLS_PER_LOOP = 3;

interface Gaps {
  /** Model answer out → next model request in, minus the endpoint's time when the tool is an HTTP endpoint. */
  overhead: number[];
  /** The endpoint's own handling time of each call (empty when the tool is no endpoint). */
  endpoint: number[];
}

/** The gaps of every tool call in the conversations `belongs` picks out. */
function toolGaps(noted: Noted[], belongs: (conversation: string) => boolean, viaEndpoint: boolean): Gaps {
  const at = new Map(noted.map((note) => [`${note.kind} ${note.turn} ${note.conversation}`, note]));
  const gaps: Gaps = { overhead: [], endpoint: [] };
  for (const asked of noted.filter((note) => note.kind === "model" && note.turn < CALLS_PER_LOOP && belongs(note.conversation))) {
    const next = at.get(`model ${asked.turn + 1} ${asked.conversation}`);
    if (!next) throw new Error(`no model request followed tool call ${asked.turn} of "${asked.conversation}"`);
    let gap = next.arrivedAt - asked.answeredAt;
    if (viaEndpoint) {
      const call = at.get(`tool ${asked.turn} ${asked.conversation}`);
      if (!call) throw new Error(`the tool endpoint never saw call ${asked.turn} of "${asked.conversation}"`);
      gaps.endpoint.push(call.answeredAt - call.arrivedAt);
      gap -= call.answeredAt - call.arrivedAt;
    }
    gaps.overhead.push(gap);
  }
  return gaps;
}

/** Orka's gaps for a custom HTTP Tool and for recall_memory, `LOOPS` Tasks of each after a warm-up Task. */
async function measureOrka(modelURL: string): Promise<{ http: Gaps; builtin: Gaps }> {
  const orka = await startOrkaProcess("tool-overhead");
  try {
    await orka.api("POST", "/secrets", { name: "key", stringData: { "api-key": "k" } });
    await orka.api("POST", "/providers", { metadata: { name: "timed" }, spec: { type: "openai", baseURL: `${modelURL}/v1`, secretRef: { name: "key" } } });
    const parameters = { type: "object", properties: { n: { type: "number" }, conversation: { type: "string" } } };
    await orka.api("POST", "/tools", { metadata: { name: "noop" }, spec: { description: "no-op", parameters, http: { url: `${modelURL}/noop` } } });
    // The model name picks the timed model's script: three calls of the tool of that name.
    await orka.api("POST", "/agents", { metadata: { name: "http-tool" }, spec: { providerRef: { name: "timed" }, model: { name: "noop" }, tools: [{ name: "noop" }] } });
    await orka.api("POST", "/agents", { metadata: { name: "built-in" }, spec: { providerRef: { name: "timed" }, model: { name: "recall_memory" } } });
    for (const agent of ["http-tool", "built-in"]) {
      // One untimed Task first: the worker processes load their modules on their first attempt.
      await orka.runTask(`warm-up-${agent}`, agent);
      for (let i = 0; i < LOOPS; i++) await orka.runTask(`${agent}-${i}`, agent);
    }
    const noted = await takeNoted(modelURL);
    return {
      http: toolGaps(noted, (c) => c.startsWith("http-tool-"), true),
      builtin: toolGaps(noted, (c) => c.startsWith("built-in-"), false),
    };
  } finally {
    await orka.close();
  }
}

/** The bare loop's gaps for the same HTTP tool, `LOOPS` Tasks one at a time after a warm-up Task, followed on one watch. */
async function measureBare(modelURL: string): Promise<Gaps | Error> {
  try {
    const bare = await startBareLoop(modelURL);
    try {
      const watch = await bare.watchTasks();
      await watch.runTask("warm-up-bare", "loop");
      for (let i = 0; i < LOOPS; i++) await watch.runTask(`bare-${i}`, "loop");
      await watch.close();
      return toolGaps(await takeNoted(modelURL), (c) => c.startsWith("bare-"), true);
    } finally {
      await bare.close();
    }
  } catch (err) {
    return err as Error;
  }
}

/** @openai/agents' gaps for a function tool that does nothing and one that calls the HTTP endpoint. */
async function measurePeer(modelURL: string): Promise<{ http: Gaps; function: Gaps } | Error> {
  try {
    const dir = await preparePeers();
    const port = new URL(modelURL).port;
    for (const kind of ["function", "http"]) await runPeerScript(dir, "oa-tool-gap.mjs", [port, String(LOOPS), kind]);
    const noted = await takeNoted(modelURL);
    return { function: toolGaps(noted, (c) => c.startsWith("oa-function-"), false), http: toolGaps(noted, (c) => c.startsWith("oa-http-"), true) };
  } catch (err) {
    return err as Error;
  }
}

/**
 * Orka's OpenAI client alone, in this process: `LOOPS` conversations of the timed model's `noop` script one at
 * a time after a warm-up one, each tool call answered with its result at once.
 */
async function measureClientAlone(modelURL: string): Promise<Gaps | Error> {
  try {
    const client = openAIModel({ apiKey: "k", baseURL: `${modelURL}/v1`, timeoutMs: 60_000 });
    for (let i = -1; i < LOOPS; i++) {
      const conversation = i < 0 ? "warm-up-client" : `client-${i}`;
      const messages: ChatMessage[] = [{ role: "user", content: conversation }];
      // The script answers after its tool calls; a model that kept asking would be a broken timed model.
      for (let turn = 0; ; turn++) {
        if (turn > CALLS_PER_LOOP) throw new Error(`the timed model did not answer "${conversation}" after ${CALLS_PER_LOOP} tool calls`);
        const reply = await client.complete({ model: NOOP_TOOL.name, messages, tools: [NOOP_TOOL], maxTokens: 1024 });
        if (reply.toolCalls.length === 0) break;
        messages.push({ role: "assistant", content: reply.text, toolCalls: reply.toolCalls });
        for (const call of reply.toolCalls) messages.push({ role: "tool", toolCallId: call.id, name: call.name, content: "ok" });
      }
    }
    return toolGaps(await takeNoted(modelURL), (c) => c.startsWith("client-"), false);
  } catch (err) {
    return err as Error;
  }
}

const model = await startChildServer(join(import.meta.dirname, "timed-model.ts"));
try {
  const orka = await measureOrka(model.url);
  const bare = await measureBare(model.url);
  const peer = await measurePeer(model.url);
  const clientAlone = await measureClientAlone(model.url);
  const endpointTime = (gaps: Gaps) => (gaps.endpoint.length ? percentiles(gaps.endpoint).p50_ms.toFixed(2) : "–");
  const ratio = (mine: Gaps, theirs: Gaps | undefined) => (theirs ? `${(percentiles(mine.overhead).p50_ms / percentiles(theirs.overhead).p50_ms).toFixed(1)}×` : "");
  const row = (system: string, tool: string, gaps: Gaps, versus?: Gaps) => [system, tool, String(gaps.overhead.length), p50p95(percentiles(gaps.overhead)), endpointTime(gaps), ratio(gaps, versus)];
  const notRun = (system: string, err: Error) => [system, `not run: ${err.message.split("\n")[0]}`, "", "", "", ""];
  const rowOrNotRun = (system: string, tool: string, gaps: Gaps | Error) => (gaps instanceof Error ? notRun(system, gaps) : row(system, tool, gaps));
  const peerHTTP = peer instanceof Error ? undefined : peer.http;
  const peerFunction = peer instanceof Error ? undefined : peer.function;
  const rows = [
    row("Orka", "custom HTTP Tool (POST to the endpoint)", orka.http, peerHTTP),
    row("Orka", "built-in recall_memory (empty memory store)", orka.builtin, peerFunction),
    rowOrNotRun("the bare loop", "the same HTTP tool, every step durable, no logic", bare),
    ...(peer instanceof Error
      ? [notRun("@openai/agents", peer)]
      : [row("@openai/agents", "function tool calling the same HTTP endpoint", peer.http), row("@openai/agents", "function tool doing nothing", peer.function)]),
    rowOrNotRun("Orka's OpenAI client alone", "none: each result handed back at once, nothing durable", clientAlone),
  ];
  const beyondBare = bare instanceof Error ? "" : `; Orka's HTTP Tool takes ${(percentiles(orka.http.overhead).p50_ms - percentiles(bare.overhead).p50_ms).toFixed(2)} ms more at p50`;
  console.log(`\nPer tool call overhead: ${LOOPS} loops of ${CALLS_PER_LOOP} tool calls one at a time per row, after a warm-up loop (the model answers at once). ` +
    "Overhead = model answer asking for the tool (sent) → next model request (arrived), minus the endpoint's handling time for HTTP tools. " +
    "Orka ÷ peer compares the HTTP Tool with the peer's HTTP function tool, recall_memory with the peer's empty function tool. " +
    "The bare loop (bench/bare-loop.ts) makes the same HTTP tool's call through Orka's stores, IPC and OpenAI client, every step durable and nothing else: " +
    `what a durable loop of Orka's pieces leaves between two model turns here${beyondBare}. ` +
    "Orka's OpenAI client alone, in one process with no tool and nothing durable, is the part of the gap that the client and HTTP take, which no loop using that client avoids.\n");
  console.log(markdownTable(["system", "tool", "calls", "overhead per call p50 / p95 ms", "endpoint's own time p50 ms", "Orka ÷ peer at p50"], rows));
} finally {
  model.close();
}
