import type { Command } from "commander";
import type { ApiClient } from "../client.ts";
import { formatTable } from "../output.ts";

type Row = Record<string, unknown>;
const print = (json: boolean, value: unknown, table: () => string) => console.log(json ? JSON.stringify(value, null, 2) : table());
const clip = (text: unknown, max = 60) => {
  const flat = String(text ?? "").replace(/\s+/g, " ");
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
};

/** `orka memory …` and `orka memory proposal …`, and `orka session …`. */
export function registerMemoryCommands(program: Command, client: () => ApiClient): void {
  const memory = program.command("memory").description("Durable memory and the proposals a person reviews");
  memory
    .command("list")
    .option("-q, --query <text>")
    .option("--tag <tag...>")
    .option("--include-disabled")
    .option("--json")
    .action(async (o: { query?: string; tag?: string[]; includeDisabled?: boolean; json?: boolean }) => {
      const list = await client().get<{ items: Row[] }>("memories", { query: o.query, tags: o.tag?.join(","), includeDisabled: o.includeDisabled ? "true" : undefined });
      print(!!o.json, list.items, () =>
        list.items.length === 0 ? "No memories found." : formatTable(["ID", "SOURCE", "TAGS", "CONTENT"], list.items.map((m) => [String(m.id), String(m.source), ((m.tags as string[]) ?? []).join(","), clip(m.content)])),
      );
    });
  memory.command("get").argument("<id>").action(async (id: string) => console.log(JSON.stringify(await client().get(`memories/${id}`), null, 2)));
  memory
    .command("create")
    .requiredOption("--content <text>")
    .option("--tag <tag...>")
    .action(async (o: { content: string; tag?: string[] }) => {
      const created = await client().post<{ id: string }>("memories", { content: o.content, tags: o.tag, source: "user" });
      console.log(`memory/${created.id} created`);
    });
  memory
    .command("update")
    .argument("<id>")
    .option("--content <text>")
    .option("--tag <tag...>")
    .action(async (id: string, o: { content?: string; tag?: string[] }) => {
      await client().put(`memories/${id}`, { content: o.content, tags: o.tag });
      console.log(`memory/${id} updated`);
    });
  memory.command("delete").argument("<id>").action(async (id: string) => {
    await client().delete(`memories/${id}`);
    console.log(`memory/${id} deleted`);
  });
  for (const verb of ["enable", "disable"]) {
    memory.command(verb).argument("<id>").action(async (id: string) => {
      await client().post(`memories/${id}/${verb}`);
      console.log(`memory/${id} ${verb}d`);
    });
  }

  const proposal = memory.command("proposal").description("Proposals made by agents, waiting for a person");
  proposal
    .command("list")
    .option("--status <status>", "pending, accepted, rejected, applied or archived")
    .option("--type <type>")
    .option("--json")
    .action(async (o: { status?: string; type?: string; json?: boolean }) => {
      const list = await client().get<{ items: Row[] }>("memory-proposals", { status: o.status, type: o.type });
      print(!!o.json, list.items, () =>
        list.items.length === 0
          ? "No proposals found."
          : formatTable(["ID", "TYPE", "STATUS", "TASK", "TITLE"], list.items.map((p) => [String(p.id), String(p.type), String(p.status), String(p.taskName ?? ""), clip(p.title)])),
      );
    });
  proposal.command("get").argument("<id>").action(async (id: string) => console.log(JSON.stringify(await client().get(`memory-proposals/${id}`), null, 2)));
  proposal
    .command("review")
    .argument("<id>")
    .requiredOption("--status <status>", "accepted or rejected")
    .option("--note <text>", "review note")
    .action(async (id: string, o: { status: string; note?: string }) => {
      await client().post(`memory-proposals/${id}/review`, { status: o.status, reviewNote: o.note });
      console.log(`proposal/${id} ${o.status}`);
    });
  proposal.command("apply").argument("<id>").action(async (id: string) => {
    const applied = await client().post<{ id: string }>(`memory-proposals/${id}/apply`, {});
    console.log(`proposal/${id} applied as memory/${applied.id}`);
  });
  proposal.command("archive").argument("<id>").action(async (id: string) => {
    await client().post(`memory-proposals/${id}/archive`, {});
    console.log(`proposal/${id} archived`);
  });

  const session = program.command("session").description("Conversation sessions (spec.sessionRef)");
  session.command("list").action(async () => {
    const list = await client().get<{ items: Row[] }>("sessions");
    console.log(list.items.length === 0 ? "No sessions found." : formatTable(["NAME", "MESSAGES", "LOCKED BY"], list.items.map((s) => [String(s.name), String(s.messages), String(s.lockedBy ?? "")])));
  });
  session.command("get").argument("<name>").action(async (name: string) => {
    const found = await client().get<{ messages: Row[] }>(`sessions/${name}`);
    for (const m of found.messages) console.log(`${String(m.role).padEnd(9)} ${clip(m.content, 200)}`);
  });
}
