import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashToken } from "../../src/store/data-store.ts";
import { API_VERSION } from "../../src/resources/meta.ts";
import type { RunningOrka } from "../../src/server.ts";
import { EMBEDDED_ADMIN_TOKEN, startEmbeddedOrka } from "../helpers/embedded.ts";

// A custom Tool call may carry the place of its result in the journal: the control plane then writes
// that step with the reply its effect ledger records, in the same commit, and the worker does not.
describe("a custom Tool call's result step, journalled by the control plane", () => {
  let orka: RunningOrka;
  let endpoint: http.Server;
  /** The words the Tool's endpoint was called with, in order. */
  const received: string[] = [];
  const timesCalled = (word: string) => received.filter((w) => w === word).length;
  /** Waits (at most 5 s) until the endpoint has been called with `word`: the call is then under way. */
  const underWay = async (word: string) => {
    for (let i = 0; i < 500 && timesCalled(word) === 0; i++) await new Promise((resolve) => setTimeout(resolve, 10));
  };
  const token = "attempt-token-for-tool-results";
  const key = (n: number) => n.toString(16).padStart(64, "0");

  const call = (body: unknown, idempotencyKey?: string, as = { task: "worker-task", token }) =>
    fetch(`${orka.url}/internal/v1/tools/default/${as.task}/echo`, {
      method: "POST",
      headers: { authorization: `Bearer ${as.token}`, "content-type": "application/json", ...(idempotencyKey ? { "idempotency-key": idempotencyKey } : {}) },
      body: JSON.stringify(body),
    });
  const steps = async () =>
    ((await (await fetch(`${orka.url}/internal/v1/journal/default/worker-task?run=1`, { headers: { authorization: `Bearer ${token}` } })).json()) as { steps: { seq: number; kind: string; messages: unknown[] }[] }).steps;
  const createTask = async (name: string) =>
    (await orka.store.create({ apiVersion: API_VERSION, kind: "Task", metadata: { name, namespace: "default" }, spec: { type: "container", command: ["true"], schedule: "0 0 1 1 *" } })).metadata.uid!;

  beforeAll(async () => {
    endpoint = http.createServer((req, res) => {
      let body = "";
      req.on("data", (chunk) => (body += chunk));
      req.on("end", () => {
        // Only the test's calls carry a word (the Tool's reconciler may look at the endpoint too).
        const { word } = JSON.parse(body || "{}");
        if (word) received.push(word);
        // A slow call leaves time for its attempt to end while the Tool works.
        setTimeout(() => res.writeHead(200, { "content-type": "text/plain" }).end(`echo ${word}`), word?.startsWith("slow") ? 300 : 0);
      });
    });
    await new Promise<void>((listening) => endpoint.listen(0, "127.0.0.1", listening));
    orka = await startEmbeddedOrka({}, { ORKA_ALLOW_LOOPBACK_EGRESS: "true" });
    const url = `http://127.0.0.1:${(endpoint.address() as AddressInfo).port}/echo`;
    const tool = { metadata: { name: "echo" }, spec: { description: "echo", parameters: { type: "object", properties: { word: { type: "string" } } }, http: { url } } };
    const created = await fetch(`${orka.url}/api/v1/tools`, { method: "POST", headers: { authorization: `Bearer ${EMBEDDED_ADMIN_TOKEN}`, "content-type": "application/json" }, body: JSON.stringify(tool) });
    expect(created.status).toBe(201);
    // A yearly schedule: the controller leaves the Task alone, so only this test's attempt acts.
    orka.data.createAttempt({ id: "a-1", namespace: "default", task: "worker-task", taskUid: await createTask("worker-task"), number: 1, allowedTools: ["echo"] }, hashToken(token));
  });
  afterAll(async () => {
    await orka.close();
    endpoint.close();
  });

  it("writes the step with the reply, and a repeated call neither calls the Tool again nor writes again", async () => {
    const resultStep = { run: 1, seq: 1, toolCallId: "call-1" };
    const first = await call({ arguments: { word: "one" }, resultStep }, key(1));
    expect([first.status, await first.json()]).toEqual([200, { result: "echo one", journalled: true }]);
    const expected = [{ seq: 1, kind: "tool_result", messages: [{ role: "tool", toolCallId: "call-1", name: "echo", content: "echo one" }] }];
    expect(await steps()).toMatchObject(expected);

    const again = await call({ arguments: { word: "one" }, resultStep }, key(1));
    expect([again.status, await again.json()]).toEqual([200, { result: "echo one", journalled: true }]);
    expect(timesCalled("one")).toBe(1);
    expect(await steps()).toHaveLength(1);
  });

  it("refuses a result step without an idempotency key, or with a field it does not know, and changes nothing", async () => {
    const unkeyed = await call({ arguments: { word: "two" }, resultStep: { run: 1, seq: 2, toolCallId: "call-2" } });
    expect([unkeyed.status, ((await unkeyed.json()) as any).error.message]).toEqual([400, "a tool call that asks for its result to be journalled (resultStep) must carry an Idempotency-Key header"]);
    const unknown = await call({ arguments: { word: "two" }, resultStep: { run: 1, seq: 2, toolCallId: "call-2", kind: "response" } }, key(2));
    expect(unknown.status).toBe(400);
    expect(((await unknown.json()) as any).error.message).toMatch(/kind/);
    const stray = await call({ arguments: { word: "two" }, journal: true }, key(5));
    expect([stray.status, ((await stray.json()) as any).error.message]).toEqual([400, expect.stringMatching(/journal/)]);
    expect(timesCalled("two")).toBe(0);
    expect(await steps()).toHaveLength(1);
    // Nothing was recorded under the refused calls' key: a valid call with it runs.
    const valid = await call({ arguments: { word: "two" } }, key(2));
    expect([valid.status, await valid.json(), timesCalled("two")]).toEqual([200, { result: "echo two" }, 1]);
  });

  it("refuses a call whose step would not be its run's next before anything starts: no Tool call, no record", async () => {
    const call3 = (seq: number) => call({ arguments: { word: "three" }, resultStep: { run: 1, seq, toolCallId: "call-3" } }, key(3));
    for (const [seq, message] of [[5, "journal step 5 does not follow step 1"], [1, "journal step 1 of run 1 is already written"]] as const) {
      const misplaced = await call3(seq);
      expect([misplaced.status, ((await misplaced.json()) as any).error.message]).toEqual([409, message]);
    }
    expect(timesCalled("three")).toBe(0);
    expect(await steps()).toHaveLength(1);
    // Nothing was recorded under the key: the same call at its right place runs.
    const placed = await call3(2);
    expect([placed.status, await placed.json()]).toEqual([200, { result: "echo three", journalled: true }]);
    expect(timesCalled("three")).toBe(1);
    expect((await steps()).map((step) => step.seq)).toEqual([1, 2]);
  });

  it("leaves a call without a result step to the worker, as before", async () => {
    const plain = await call({ arguments: { word: "four" } }, key(4));
    expect([plain.status, await plain.json()]).toEqual([200, { result: "echo four" }]);
    expect(await steps()).toHaveLength(2);
  });

  it("writes no step for an attempt that ended while its call ran, and says so in the reply it records", async () => {
    const ending = { task: "ending-task", token: "attempt-token-that-ends" };
    const uid = await createTask(ending.task);
    orka.data.createAttempt({ id: "a-ending", namespace: "default", task: ending.task, taskUid: uid, number: 1, allowedTools: ["echo"] }, hashToken(ending.token));
    const answered = call({ arguments: { word: "slow" }, resultStep: { run: 1, seq: 1, toolCallId: "call-slow" } }, key(6), ending);
    await underWay("slow");
    orka.data.finishAttempt("a-ending", { state: "killed", reason: "stopped while its tool ran" });
    const reply = await answered;
    expect([reply.status, await reply.json()]).toEqual([200, { result: "echo slow" }]);
    // The next attempt finds no step it did not write, and the same call answered from the record, as sent.
    const next = { task: ending.task, token: "attempt-token-that-follows" };
    orka.data.createAttempt({ id: "a-next", namespace: "default", task: ending.task, taskUid: uid, number: 2, allowedTools: ["echo"] }, hashToken(next.token));
    const journal = await fetch(`${orka.url}/internal/v1/journal/default/${ending.task}?run=1`, { headers: { authorization: `Bearer ${next.token}` } });
    expect(((await journal.json()) as { steps: unknown[] }).steps).toEqual([]);
    const again = await call({ arguments: { word: "slow" }, resultStep: { run: 1, seq: 1, toolCallId: "call-slow" } }, key(6), next);
    expect([again.headers.get("orka-replayed"), await again.json()]).toEqual(["true", { result: "echo slow" }]);
  });

  it("answers the same call, sent again while the first is still running, as of unknown outcome: the Tool runs once", async () => {
    const slow = { arguments: { word: "slower" }, resultStep: { run: 1, seq: 3, toolCallId: "call-7" } };
    const first = call(slow, key(7));
    await underWay("slower");
    // The same answer a resumed attempt gets when the server died between starting the call and recording its reply.
    const again = await call(slow, key(7));
    expect(((await again.json()) as { result: string }).result).toMatch(/^outcome unknown: this call of echo started earlier and its reply was not recorded/);
    expect(await (await first).json()).toEqual({ result: "echo slower", journalled: true });
    expect(timesCalled("slower")).toBe(1);
  });

  it("writes the answer a call carries in the commit that starts the call, with the events that came with it, once; a misplaced one refuses the call", async () => {
    const carrier = { task: "carrying-task", token: "attempt-token-that-carries" };
    orka.data.createAttempt({ id: "a-carrying", namespace: "default", task: carrier.task, taskUid: await createTask(carrier.task), number: 1, allowedTools: ["echo"] }, hashToken(carrier.token));
    const journalOf = async () =>
      ((await (await fetch(`${orka.url}/internal/v1/journal/default/${carrier.task}?run=1`, { headers: { authorization: `Bearer ${carrier.token}` } })).json()) as { steps: { seq: number; kind: string }[] }).steps.map((step) => [step.seq, step.kind]);
    const eventsOf = () => orka.data.listEvents("default", carrier.task, { type: "ToolCallStarted" }).map((event) => event.summary);
    const write = (steps: unknown[]) =>
      fetch(`${orka.url}/internal/v1/journal/default/${carrier.task}`, { method: "POST", headers: { authorization: `Bearer ${carrier.token}`, "content-type": "application/json" }, body: JSON.stringify({ steps }) });
    const request = { run: 1, seq: 1, kind: "request", messages: [{ role: "user", content: "say it" }], detail: { system: "" } };
    const answer = (seq: number, word: string) => ({ run: 1, seq, kind: "response", messages: [{ role: "assistant", content: "", toolCalls: [{ id: `call-${word}`, name: "echo", arguments: JSON.stringify({ word }) }] }], detail: {} });
    expect((await write([request])).status).toBe(200);

    // Carried at the wrong place: refused before the Tool is called, and nothing of the call is recorded.
    const misplaced = await call({ arguments: { word: "early" }, resultStep: { run: 1, seq: 4, toolCallId: "call-early" }, journalFirst: { steps: [answer(3, "early")] } }, key(8), carrier);
    expect([misplaced.status, ((await misplaced.json()) as any).error.message]).toEqual([409, "journal step 3 does not follow step 1"]);
    // The answer in its place but the call's result not after it: the call is refused, and the answer is not written either.
    const resultMisplaced = await call({ arguments: { word: "early" }, resultStep: { run: 1, seq: 5, toolCallId: "call-early" }, journalFirst: { steps: [answer(2, "early")] } }, key(8), carrier);
    expect([resultMisplaced.status, ((await resultMisplaced.json()) as any).error.message]).toEqual([409, "journal step 5 does not follow step 2"]);
    // A field the carried journal does not know, or no idempotency key: refused as a whole.
    const unknown = await call({ arguments: { word: "early" }, journalFirst: { steps: [answer(2, "early")], extra: true } }, key(8), carrier);
    expect([unknown.status, ((await unknown.json()) as any).error.message]).toEqual([400, expect.stringMatching(/extra/)]);
    const unkeyed = await call({ arguments: { word: "early" }, journalFirst: { steps: [answer(2, "early")] } }, undefined, carrier);
    expect([unkeyed.status, ((await unkeyed.json()) as any).error.message]).toEqual([400, "a tool call that carries journal steps (journalFirst) must carry an Idempotency-Key header"]);
    expect([timesCalled("early"), await journalOf(), eventsOf()]).toEqual([0, [[1, "request"]], []]);

    const carried = { arguments: { word: "carried" }, resultStep: { run: 1, seq: 3, toolCallId: "call-carried" }, journalFirst: { steps: [answer(2, "carried")], events: [{ type: "ToolCallStarted", summary: "echo", journalRun: 1, journalStep: 2 }] } };
    const first = await call(carried, key(9), carrier);
    expect([first.status, await first.json()]).toEqual([200, { result: "echo carried", journalled: true }]);
    expect([await journalOf(), eventsOf()]).toEqual([[[1, "request"], [2, "response"], [3, "tool_result"]], ["echo"]]);
    // The same answer sent again on its own (a worker that did not hear the call succeed) changes nothing.
    expect((await write([answer(2, "carried")])).status).toBe(200);
    // Another answer at its place is refused.
    expect((await write([answer(2, "other")])).status).toBe(409);
    expect([timesCalled("carried"), await journalOf()]).toEqual([1, [[1, "request"], [2, "response"], [3, "tool_result"]]]);
  });
});
