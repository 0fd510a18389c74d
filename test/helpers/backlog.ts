import type { OrkaUnderTest } from "./orka-server.ts";

/** Creates `count` ai Tasks `<prefix>-<i>` that run `agent` (with `model`, when given), one request each; the prompt names the Task. */
export async function queueAiTasks(orka: OrkaUnderTest, count: number, options: { prefix: string; agent: string; model?: string; priority?: number }): Promise<string[]> {
  const names: string[] = [];
  for (let i = 0; i < count; i++) {
    const name = `${options.prefix}-${i}`;
    const created = await orka.api("POST", "/api/v1/tasks", {
      name,
      type: "ai",
      agentRef: options.agent,
      prompt: `work for ${name}`,
      priority: options.priority,
      ai: options.model ? { model: options.model } : undefined,
    });
    if (created.status !== 201) throw new Error(`creating ${name} answered ${created.status}: ${JSON.stringify(created.body)}`);
    names.push(name);
  }
  return names;
}

/** How many Tasks of the default namespace are in each phase now. */
export async function phaseCounts(orka: OrkaUnderTest): Promise<Record<string, number>> {
  const { body } = await orka.api("GET", "/api/v1/tasks?limit=0");
  const counts: Record<string, number> = {};
  for (const task of body.items) counts[task.status?.phase ?? "New"] = (counts[task.status?.phase ?? "New"] ?? 0) + 1;
  return counts;
}

/** Waits (at most `timeoutMs`) until no Task is Pending, Running or new; returns the phase counts. */
export async function untilSettled(orka: OrkaUnderTest, timeoutMs: number): Promise<Record<string, number>> {
  const deadline = Date.now() + timeoutMs;
  let counts = await phaseCounts(orka);
  while (Date.now() < deadline && (counts.Pending || counts.Running || counts.New)) {
    await new Promise((r) => setTimeout(r, 200));
    counts = await phaseCounts(orka);
  }
  return counts;
}
