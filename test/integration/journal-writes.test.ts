import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashToken } from "../../src/store/data-store.ts";
import { API_VERSION } from "../../src/resources/meta.ts";
import type { RunningOrka } from "../../src/server.ts";
import { startEmbeddedOrka } from "../helpers/embedded.ts";

// A worker's journal write: steps in order with their events, and the run's final answer stored as the
// Task's result in the same commit when the write says so.
describe("the journal route", () => {
  let orka: RunningOrka;
  const token = "attempt-token-for-journal-writes";
  const write = (body: unknown) =>
    fetch(`${orka.url}/internal/v1/journal/default/writer`, { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: JSON.stringify(body) });
  const stepsWritten = async () =>
    ((await (await fetch(`${orka.url}/internal/v1/journal/default/writer?run=1`, { headers: { authorization: `Bearer ${token}` } })).json()) as { steps: { seq: number; kind: string }[] }).steps.map((step) => [step.seq, step.kind]);
  const request = { run: 1, seq: 1, kind: "request", messages: [{ role: "user", content: "say it" }], detail: { system: "" } };
  const answer = (seq: number, content: string, toolCalls?: unknown[]) => ({ run: 1, seq, kind: "response", messages: [{ role: "assistant", content, ...(toolCalls ? { toolCalls } : {}) }], detail: {} });

  beforeAll(async () => {
    orka = await startEmbeddedOrka();
    // A yearly schedule: the controller leaves the Task alone, so only this test's attempt acts.
    const spec = { type: "container", command: ["true"], schedule: "0 0 1 1 *" };
    const { uid } = (await orka.store.create({ apiVersion: API_VERSION, kind: "Task", metadata: { name: "writer", namespace: "default" }, spec })).metadata;
    orka.data.createAttempt({ id: "a-writer", namespace: "default", task: "writer", taskUid: uid!, number: 1, allowedTools: [] }, hashToken(token));
  });
  afterAll(() => orka.close());

  it("refuses a result that is not a final answer that says something, or a field it does not know, and changes nothing", async () => {
    const asking = answer(1, "", [{ id: "c1", name: "noop", arguments: "{}" }]);
    for (const steps of [[request], [asking], [answer(1, "   ")]]) {
      const refused = await write({ steps, answerIsResult: true });
      expect([refused.status, ((await refused.json()) as any).error.message]).toEqual([400, expect.stringMatching(/^answerIsResult needs the write's last step to be a final answer/)]);
    }
    const unknown = await write({ steps: [request], result: "forged" });
    expect([unknown.status, ((await unknown.json()) as any).error.message]).toEqual([400, expect.stringMatching(/result/)]);
    const unknownInEvent = await write({ steps: [request], events: [{ type: "Note", summary: "s", colour: "red" }] });
    expect([unknownInEvent.status, ((await unknownInEvent.json()) as any).error.message]).toEqual([400, expect.stringMatching(/colour/)]);
    expect([await stepsWritten(), orka.data.getResult("default", "writer")]).toEqual([[], undefined]);
  });

  it("writes several steps in order, and stores the final answer as the result with them", async () => {
    const written = await write({ steps: [request, answer(2, "the answer")], events: [{ type: "Note", summary: "with the steps" }], answerIsResult: true });
    expect(written.status).toBe(200);
    expect(await stepsWritten()).toEqual([[1, "request"], [2, "response"]]);
    expect(orka.data.getResult("default", "writer")).toBe("the answer");
    expect(orka.data.listEvents("default", "writer", { type: "Note" }).map((event) => event.summary)).toEqual(["with the steps"]);
  });
});
