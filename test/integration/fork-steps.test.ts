import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startOrkaServer, type OrkaUnderTest } from "../helpers/orka-server.ts";

// Two turns: a file write, then the answer. Offline, so the journal's steps are the same every run.
const RESOURCES = `
apiVersion: core.orka.ai/v1alpha1
kind: Provider
metadata: {name: two-turns}
spec:
  type: scripted
  scripted:
    turns:
      - toolCalls: [{name: file_write, arguments: {path: notes.txt, content: first}}]
      - text: wrote the notes
---
apiVersion: core.orka.ai/v1alpha1
kind: Agent
metadata: {name: note-taker}
spec: {providerRef: {name: two-turns}, tools: [{name: file_write}]}
`;

interface EventLine {
  seq: number;
  run?: number;
  step?: number;
  type: string;
  rest: string;
}

/** `orka task events` as printed: seq, time, the journal position when there is one, type, summary. */
function parseEvents(stdout: string): EventLine[] {
  return stdout
    .trim()
    .split("\n")
    .map((line) => {
      const match = /^\s*(\d+)\s+\S+\s+(?:run (\d+) step (\d+))?\s+(\S+)\s+(.*)$/.exec(line);
      if (!match) throw new Error(`unexpected event line: ${line}`);
      const [, seq, run, step, type, rest] = match;
      return { seq: Number(seq), run: run ? Number(run) : undefined, step: step ? Number(step) : undefined, type, rest };
    });
}

describe("fork --at takes the journal step that task events shows", () => {
  let orka: OrkaUnderTest;

  beforeAll(async () => {
    orka = await startOrkaServer();
    const applied = await orka.cli(["apply", "-f", "-"], RESOURCES);
    if (applied.code !== 0) throw new Error(applied.stderr);
  });
  afterAll(async () => {
    await orka?.stop();
  });

  it("shows each event's run and step, and a fork at an event's step continues from that event", async () => {
    expect((await orka.cli(["task", "create", "--name", "notes", "--agent", "note-taker", "--prompt", "Take notes"])).code).toBe(0);
    expect((await orka.waitFor("notes")).status.phase).toBe("Succeeded");

    const printed = await orka.cli(["task", "events", "notes"]);
    expect(printed.code).toBe(0);
    const events = parseEvents(printed.stdout);
    // Everything the run did after its first journal step carries its place; steps never go back.
    const journalled = events.filter((e) => /^(ModelRequest|ModelMessage|ToolCall|ResultSubmitted)/.test(e.type));
    expect(journalled.length).toBeGreaterThan(4);
    for (const event of journalled) expect({ type: event.type, run: event.run, step: event.step }).toEqual({ type: event.type, run: 1, step: expect.any(Number) });
    const steps = journalled.map((e) => e.step!);
    expect(steps).toEqual([...steps].sort((a, b) => a - b));
    // The JSON output carries the same fields.
    const json = (await orka.cli(["task", "events", "notes", "-o", "json"])).stdout.trim().split("\n").map((l) => JSON.parse(l));
    expect(json.filter((e) => e.journalStep !== undefined).map((e) => e.seq)).toEqual(events.filter((e) => e.step !== undefined).map((e) => e.seq));

    // Forking at the step shown beside the second model request continues right there:
    // the write is not done again, and only that request is asked anew.
    const secondRequest = events.find((e) => e.type === "ModelRequestStarted" && e.rest.startsWith("turn 2"))!;
    const forked = await orka.cli(["task", "fork", "notes", "--run", String(secondRequest.run), "--at", String(secondRequest.step), "--name", "notes-again"]);
    expect(forked).toMatchObject({ code: 0, stdout: `task/notes-again created from notes at step ${secondRequest.step}\n` });
    expect((await orka.waitFor("notes-again")).status.phase).toBe("Succeeded");
    const again = parseEvents((await orka.cli(["task", "events", "notes-again"])).stdout);
    expect(again.find((e) => e.type === "AttemptResumed")?.rest).toContain(`after ${secondRequest.step} journalled steps`);
    expect(again.filter((e) => e.type.startsWith("ToolCall"))).toEqual([]);
    expect(again.filter((e) => e.type === "ModelRequestStarted").map((e) => e.rest)).toEqual([expect.stringMatching(/^turn 2:/)]);
    expect((await orka.cli(["task", "result", "notes-again"])).stdout).toBe("wrote the notes\n");

    // At the step shown beside the write, the fork does the write again.
    const write = events.find((e) => e.type === "ToolCallStarted")!;
    expect((await orka.cli(["task", "fork", "notes", "--at", String(write.step), "--name", "notes-rewrite"])).code).toBe(0);
    expect((await orka.waitFor("notes-rewrite")).status.phase).toBe("Succeeded");
    const rewrite = parseEvents((await orka.cli(["task", "events", "notes-rewrite"])).stdout);
    expect(rewrite.filter((e) => e.type === "ToolCallStarted").map((e) => e.rest)).toEqual([expect.stringMatching(/^\[file_write\]/)]);
  });
});
