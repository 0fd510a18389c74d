import { InvalidArgumentError, Option, type Command } from "commander";
import { isTerminalPhase } from "../../resources/task.ts";
import { parseYamlDocuments } from "../../resources/yaml.ts";
import { parseDuration } from "../../util/duration.ts";
import type { ApiClient } from "../client.ts";
import { outputOption, readInput } from "../options.ts";
import { formatTable, render, type OutputFormat } from "../output.ts";
import { awaitedApproval, parkedNotice, type TaskState } from "../parked.ts";

/** `orka task …`: create, follow, inspect, fork and decide the approvals of Tasks. */
export function registerTaskCommands(program: Command, client: () => ApiClient): void {
  const task = program.command("task").description("Work with Tasks");

  task
    .command("create")
    .description("Create a Task from a file or from flags")
    .option("-f, --filename <file>", "Task YAML or JSON")
    .option("--name <name>")
    .option("--type <type>", "ai, agent or container", "ai")
    .option("--agent <agent>")
    .option("--prompt <prompt>")
    .option("--timeout <duration>")
    .option("--priority <n>")
    .action(async (options: Record<string, string | undefined>) => {
      const body = options.filename
        ? parseYamlDocuments(readInput(options.filename), options.filename)[0]
        : {
            name: options.name,
            type: options.type,
            agentRef: options.agent,
            prompt: options.prompt,
            timeout: options.timeout,
            priority: options.priority === undefined ? undefined : Number(options.priority),
          };
      const created = await client().post<{ metadata: { name: string } }>("tasks", body);
      console.log(`task/${created.metadata.name} created`);
    });

  task
    .command("list")
    .description("List Tasks")
    .option("--status <phase>", "only Tasks in this phase")
    .addOption(outputOption())
    .action(async (options: { status?: string; output: OutputFormat }) => {
      const list = await client().get<{ items: { status?: { phase?: string } }[] }>("tasks", { limit: "0" });
      const items = options.status ? list.items.filter((t) => (t.status?.phase ?? "Pending").toLowerCase() === options.status!.toLowerCase()) : list.items;
      console.log(render("Task", items as Record<string, unknown>[], options.output));
    });

  for (const verb of ["get", "status"]) {
    task
      .command(verb)
      .argument("<name>")
      .addOption(outputOption())
      .action(async (name: string, options: { output: OutputFormat }) => {
        console.log(render("Task", [await client().get(`tasks/${name}`)], options.output, true));
      });
  }

  task
    .command("wait")
    .description("Wait until a Task ends; exits non-zero when it Failed or was Cancelled")
    .argument("<name>")
    .option("--timeout <duration>", "give up after this long", "10m")
    .action(async (name: string, options: { timeout: string }) => {
      const api = client();
      const deadline = Date.now() + parseDuration(options.timeout);
      let lastLine = "";
      for (;;) {
        const current = await api.get<TaskState>(`tasks/${name}`);
        const phase = current.status?.phase ?? "Pending";
        const line = `task/${name}: ${phase}${current.status?.message ? ` — ${current.status.message}` : ""}`;
        if (line !== lastLine) {
          console.error(line);
          const approval = awaitedApproval(current);
          if (approval) console.error(parkedNotice(current, approval));
        }
        lastLine = line;
        if (isTerminalPhase(phase)) {
          if (phase !== "Succeeded") process.exitCode = 1;
          return;
        }
        if (Date.now() > deadline) {
          console.error(`timed out after ${options.timeout} waiting for task/${name}`);
          process.exitCode = 2;
          return;
        }
        await new Promise((r) => setTimeout(r, 500));
      }
    });

  task
    .command("result")
    .description("Print a Task's result; exits non-zero while the Task is parked waiting for an approval")
    .argument("<name>")
    .action(async (name: string) => {
      const api = client();
      const current = await api.get<TaskState>(`tasks/${name}`);
      const approval = awaitedApproval(current);
      if (approval) {
        console.error(`${parkedNotice(current, approval)}\nIt has no result until then.`);
        process.exitCode = 1;
        return;
      }
      console.log((await api.get<{ result: string }>(`tasks/${name}/result`)).result);
    });

  task
    .command("logs")
    .argument("<name>")
    .option("-f, --follow", "stream until the Task ends")
    .action(async (name: string, options: { follow?: boolean }) => {
      const api = client();
      if (!options.follow) {
        process.stdout.write((await api.get<{ logs: string }>(`tasks/${name}/logs`)).logs);
        return;
      }
      for await (const frame of api.stream(`tasks/${name}/logs`, { follow: "true" })) {
        if (frame.event === "stream_complete") return;
        process.stdout.write(JSON.parse(frame.data).text);
      }
    });

  task
    .command("events")
    .argument("<name>")
    .option("--after <seq>", "only events after this sequence number", "0")
    .option("--type <type>", "only events of this type")
    .option("-f, --follow", "stream until the Task ends")
    .addOption(outputOption())
    .action(async (name: string, options: { after: string; type?: string; follow?: boolean; output: OutputFormat }) => {
      const api = client();
      // An ai run's events say where its journal stood: `task fork --run R --at S` continues from there.
      const step = (e: { journalRun?: number; journalStep?: number }) => (e.journalStep ? `run ${e.journalRun} step ${e.journalStep}` : "");
      const print = (e: { seq: number; createdAt: string; type: string; toolName?: string; summary: string; journalRun?: number; journalStep?: number }) =>
        console.log(
          options.output === "json" ? JSON.stringify(e) : `${String(e.seq).padStart(4)}  ${e.createdAt}  ${step(e).padEnd(15)} ${e.type.padEnd(22)} ${e.toolName ? `[${e.toolName}] ` : ""}${e.summary}`,
        );
      if (options.follow) {
        for await (const frame of api.stream(`tasks/${name}/stream`, { after: options.after })) {
          if (frame.event === "stream_complete") return;
          if (frame.event === "execution_event") print(JSON.parse(frame.data));
        }
        return;
      }
      const page = await api.get<{ events: Parameters<typeof print>[0][] }>(`tasks/${name}/events`, { after: options.after, type: options.type, limit: "500" });
      for (const event of page.events) print(event);
    });

  task
    .command("cancel")
    .argument("<name>")
    .option("--reason <text>", "why", "")
    .action(async (name: string, options: { reason: string }) => {
      const answer = await client().post<{ phase: string }>(`tasks/${name}/cancel`, { reason: options.reason });
      console.log(`task/${name} ${answer.phase}`);
    });

  task
    .command("children")
    .argument("<name>")
    .addOption(outputOption())
    .action(async (name: string, options: { output: OutputFormat }) => {
      const list = await client().get<{ items: Record<string, unknown>[] }>(`tasks/${name}/children`);
      console.log(render("Task", list.items, options.output));
    });

  task
    .command("export")
    .description("Print a finished run as a replay Provider: apply it, point a Task at it, and the run plays back offline")
    .argument("<name>")
    .option("--run <n>", "which run (default: the latest)")
    .option("--provider <name>", "name of the Provider (default: <task>-replay)")
    .addOption(new Option("-o, --output <format>", "output format").choices(["yaml", "json"]).default("yaml"))
    .action(async (name: string, options: { run?: string; provider?: string; output: "yaml" | "json" }) => {
      const provider = await client().get(`tasks/${name}/export`, { run: options.run, provider: options.provider });
      console.log(render("Provider", [provider as Record<string, unknown>], options.output, true));
    });

  task
    .command("fork")
    .description("Start a new Task that continues a run from one of its journalled steps")
    .argument("<name>")
    .requiredOption("--at <step>", "the journal step to continue from: the `step` `orka task events` shows beside an event", (v) => positiveInt(v, "--at"))
    .option("--run <n>", "the run that step belongs to (`run` beside it; default: the latest)", (v) => positiveInt(v, "--run"))
    .option("--model <model>", "the model to continue with")
    .option("--name <name>", "name of the new Task")
    .action(async (name: string, options: { at: number; run?: number; model?: string; name?: string }) => {
      const fork = await client().post<{ metadata: { name: string } }>(`tasks/${name}/fork`, { at: options.at, run: options.run, model: options.model, name: options.name });
      console.log(`task/${fork.metadata.name} created from ${name} at step ${options.at}`);
    });

  task
    .command("artifacts")
    .argument("<name>")
    .action(async (name: string) => {
      const list = await client().get<{ items: { file: string; size: number }[] }>(`tasks/${name}/artifacts`);
      for (const item of list.items) console.log(`${item.file}\t${item.size}`);
    });

  task
    .command("approvals")
    .description("Approval requests of a Task")
    .argument("<name>")
    .option("--json")
    .action(async (name: string, options: { json?: boolean }) => {
      const answer = await client().get<{ approvals: Record<string, unknown>[] }>(`tasks/${name}/approvals`);
      if (options.json) return console.log(JSON.stringify(answer.approvals, null, 2));
      if (answer.approvals.length === 0) return console.log("No approvals.");
      console.log(
        formatTable(
          ["ID", "STATUS", "TOOL", "SEVERITY", "ACTION", "ARGUMENTS"],
          answer.approvals.map((a) => [String(a.id).slice(0, 16), String(a.status), String(a.targetTool), String(a.severity), String(a.action), String(a.targetArgsPreview)]),
        ),
      );
    });

  for (const [verb, decision] of [["approve", "approve"], ["decline", "decline"]] as const) {
    task
      .command(verb)
      .description(`${verb === "approve" ? "Approve" : "Decline"} one approval request (the full id, or a unique prefix)`)
      .argument("<name>")
      .argument("<id>")
      .option("--reason <text>")
      .action(async (name: string, id: string, options: { reason?: string }) => {
        const api = client();
        const { approvals } = await api.get<{ approvals: { id: string }[] }>(`tasks/${name}/approvals`);
        const matches = approvals.filter((a) => a.id.startsWith(id));
        if (matches.length !== 1) throw new InvalidArgumentError(matches.length === 0 ? `no approval ${id} on task ${name}` : `approval id ${id} is ambiguous; give more of it`);
        const decided = await api.post<{ status: string }>(`tasks/${name}/approvals/${matches[0].id}/decision`, { decision, reason: options.reason });
        console.log(`approval ${matches[0].id} ${decided.status}`);
      });
  }

  task
    .command("delete")
    .argument("<name>")
    .action(async (name: string) => {
      await client().delete(`tasks/${name}`);
      console.log(`task/${name} deleted`);
    });
}

function positiveInt(value: string, flag: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError(`${flag} must be a whole number of 1 or more`);
  return n;
}

