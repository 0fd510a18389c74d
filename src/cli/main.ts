#!/usr/bin/env node
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { homedir } from "node:os";
import { Command, InvalidArgumentError, Option } from "commander";
import { serverConfigFrom } from "../config.ts";
import { pluralOf, resolveKindName, type KindName } from "../resources/kinds.ts";
import { isTerminalPhase } from "../resources/task.ts";
import { parseYamlDocuments } from "../resources/yaml.ts";
import { parseDuration } from "../util/duration.ts";
import { errorMessage } from "../util/errors.ts";
import { applyDocuments, readApplySources, SERVER_PLACEHOLDER } from "./apply.ts";
import { registerMemoryCommands } from "./commands/memory.ts";
import { ApiClient } from "./client.ts";
import { cliConfigPath, DEFAULT_SERVER, maskToken, readCliConfig, writeCliConfig } from "./config.ts";
import { formatTable, render, renderRows, type Column, type OutputFormat } from "./output.ts";
import { awaitedApproval, parkedNotice, type TaskState } from "./parked.ts";

interface GlobalOptions {
  server?: string;
  namespace?: string;
  token?: string;
  txnToken?: string;
}

const program = new Command("orka")
  .description("Run AI agents as durable, observable, policy-checked Tasks")
  .option("-s, --server <url>", `Orka server (default: config file, then ${DEFAULT_SERVER})`)
  .option("-n, --namespace <ns>", "namespace (default: config file, then the token's, then default)")
  .option("-t, --token <token>", "API token (default: config file or ORKA_TOKEN)")
  .option("--txn-token <token>", "transaction token, sent as the Txn-Token header (default: ORKA_TXN_TOKEN)")
  .showHelpAfterError();

const outputOption = () =>
  new Option("-o, --output <format>", "output format").choices(["table", "json", "yaml"]).default("table");

/** Flags, then environment, then the config file. */
function settings() {
  const flags = program.opts<GlobalOptions>();
  const config = readCliConfig(cliConfigPath());
  return {
    server: flags.server ?? process.env.ORKA_SERVER ?? config.server ?? DEFAULT_SERVER,
    token: flags.token ?? process.env.ORKA_TOKEN ?? config.token,
    txnToken: flags.txnToken ?? process.env.ORKA_TXN_TOKEN,
    namespace: flags.namespace ?? process.env.ORKA_NAMESPACE ?? config.namespace,
  };
}

function client(): ApiClient {
  return new ApiClient(settings());
}

function kindArgument(typed: string): KindName {
  const kind = resolveKindName(typed);
  if (!kind) throw new InvalidArgumentError(`unknown kind "${typed}"; use task, agent, provider, tool, skill or secret`);
  return kind;
}

function readInput(file: string): string {
  return readFileSync(file === "-" ? 0 : file, "utf8");
}

// ---- serve ----

program
  .command("serve")
  .description("Start the Orka server (API, controller and local workers) in this process")
  .option("--host <host>", "listen address (ORKA_HOST)")
  .option("--port <port>", "listen port, 0 for any free port (ORKA_PORT)")
  .option("--data-dir <dir>", "state directory (ORKA_DATA_DIR)")
  .action(async (options: { host?: string; port?: string; dataDir?: string }) => {
    const config = serverConfigFrom(
      { ...process.env, ORKA_HOST: options.host ?? process.env.ORKA_HOST, ORKA_PORT: options.port ?? process.env.ORKA_PORT, ORKA_DATA_DIR: options.dataDir ?? process.env.ORKA_DATA_DIR },
      homedir(),
    );
    // The server's modules load only for `serve`, so every other command starts fast.
    const { startOrka } = await import("../server.ts");
    const orka = await startOrka(config);
    console.log(`orka listening on ${orka.url}`);
    for (const notice of orka.notices) console.log(`orka: ${notice}`);
    const shutdown = async () => {
      await orka.close();
      process.exit(0);
    };
    process.once("SIGINT", shutdown);
    process.once("SIGTERM", shutdown);
  });

// ---- apply / get / delete ----

program
  .command("apply")
  .description("Create or update every object of multi-document YAML files (Secrets included); unchanged objects are left alone")
  .requiredOption("-f, --filename <path>", "YAML or JSON file, a directory of .yaml/.yml/.json files, or - for stdin")
  .addHelpText("after", `\n${SERVER_PLACEHOLDER} in a Tool's spec.http.url stands for the server it is applied to (a Tool that calls Orka itself); anywhere else it is kept as written.\nSecrets are written every time (the server returns nothing derived from their values) and reported as configured.`)
  .action(async (options: { filename: string }) => {
    await applyDocuments(client(), readApplySources(options.filename), (line) => console.log(line));
  });

program
  .command("get")
  .description("List objects of a kind, or show one")
  .argument("<kind>", "task, agent, provider, tool, skill or secret", kindArgument)
  .argument("[name]")
  .addOption(outputOption())
  .action(async (kind: KindName, name: string | undefined, options: { output: OutputFormat }) => {
    const api = client();
    if (name) {
      console.log(render(kind, [await api.get(`${pluralOf(kind)}/${name}`)], options.output, true));
      return;
    }
    const list = await api.get<{ items: Record<string, unknown>[] }>(pluralOf(kind), kind === "Task" ? { limit: "0" } : {});
    console.log(render(kind, list.items, options.output));
  });

program
  .command("delete")
  .description("Delete an object (a Task's children and data go with it)")
  .argument("<kind>", "task, agent, provider, tool, skill or secret", kindArgument)
  .argument("<name>")
  .action(async (kind: KindName, name: string) => {
    await client().delete(`${pluralOf(kind)}/${name}`);
    console.log(`${kind.toLowerCase()}/${name} deleted`);
  });

// ---- task ----

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

// ---- secret ----

const secret = program.command("secret").description("Secrets (values are never shown)");

secret
  .command("create")
  .argument("<name>")
  .requiredOption("--from-literal <key=value...>", "a key and its value; repeat for more keys")
  .action(async (name: string, options: { fromLiteral: string[] }) => {
    const stringData: Record<string, string> = {};
    for (const literal of options.fromLiteral) {
      const eq = literal.indexOf("=");
      if (eq < 1) throw new InvalidArgumentError(`--from-literal "${literal.split("=")[0]}": use key=value`);
      stringData[literal.slice(0, eq)] = literal.slice(eq + 1);
    }
    await client().post("secrets", { name, stringData });
    console.log(`secret/${name} created`);
  });

secret
  .command("list")
  .addOption(outputOption())
  .action(async (options: { output: OutputFormat }) => {
    const list = await client().get<{ items: Record<string, unknown>[] }>("secrets");
    console.log(render("Secret", list.items, options.output));
  });

// ---- config / auth / token ----

const config = program.command("config").description("The CLI config file (~/.orka/config.yaml)");
for (const [verb, field] of [["set-server", "server"], ["set-namespace", "namespace"]] as const) {
  config
    .command(verb)
    .argument("<value>")
    .action((value: string) => {
      const path = cliConfigPath();
      writeCliConfig(path, { ...readCliConfig(path), [field]: value });
      console.log(`${field} set in ${path}`);
    });
}
config
  .command("set-token")
  .argument("[token]")
  .option("--file <file>", "read the token from a file, - for stdin")
  .action((token: string | undefined, options: { file?: string }) => {
    const value = (options.file ? readInput(options.file) : token ?? "").trim();
    if (!value) throw new InvalidArgumentError("give the token as an argument or with --file -");
    const path = cliConfigPath();
    writeCliConfig(path, { ...readCliConfig(path), token: value });
    console.log(`token set in ${path}`);
  });
config.command("view").action(() => {
  const current = readCliConfig(cliConfigPath());
  console.log(JSON.stringify({ ...current, token: maskToken(current.token) }, null, 2));
});

const auth = program.command("auth").description("Check credentials");
auth.command("validate").action(async () => console.log(JSON.stringify(await client().get("auth/validate"))));
auth.command("whoami").action(async () => console.log(JSON.stringify(await client().get("auth/whoami"))));

const token = program.command("token").description("API tokens bound to one namespace (admin only)");

token
  .command("create")
  .description("Create a token; it is printed once and stored hashed")
  .argument("<name>")
  .addOption(new Option("--role <role>", "operator: Secrets and operator-only fields; reviewer: memory review").choices(["user", "reviewer", "operator"]).default("user"))
  .addHelpText("after", "\nThe token's namespace is the global --namespace/-n option, which is required here:\n  orka token create ci --namespace team-a --role user")
  .action(async (name: string, options: { role: string }) => {
    // Commander gives --namespace to the global option wherever it stands on the line. A token's
    // namespace must be named on purpose, so ORKA_NAMESPACE and the config file do not count here.
    const namespace = program.opts<GlobalOptions>().namespace;
    if (!namespace) throw new InvalidArgumentError(`give the token's namespace: orka token create ${name} --namespace <ns>`);
    const created = await client().post<{ token: string }>("auth/tokens", { name, namespace, role: options.role });
    console.log(created.token);
  });

token
  .command("list")
  .description("List tokens: name, namespace, role and when each was created (never the token)")
  .addOption(outputOption())
  .action(async (options: { output: OutputFormat }) => {
    const list = await client().get<{ items: Record<string, unknown>[] }>("auth/tokens");
    const columns: Column[] = [["NAME", (t) => t.name], ["NAMESPACE", (t) => t.namespace], ["ROLE", (t) => t.role], ["CREATED", (t) => t.createdAt]];
    console.log(renderRows("tokens", columns, list.items, options.output));
  });

token
  .command("revoke")
  .description("Revoke a token by name; requests that present it are refused from then on")
  .argument("<name>")
  .action(async (name: string) => {
    await client().delete(`auth/tokens/${encodeURIComponent(name)}`);
    console.log(`token/${name} revoked`);
  });

program
  .command("login")
  .description("Open the dashboard signed in with this CLI's token (passed in the URL fragment, never sent to the server)")
  .option("--no-open", "print the URL instead of opening a browser")
  .option("--redact-token", "mask the token in what is printed")
  .action(async (options: { open: boolean; redactToken?: boolean }) => {
    const { server, token } = settings();
    if (!token) throw new InvalidArgumentError("no token: pass --token, set ORKA_TOKEN or run orka config set-token");
    await client().get("auth/whoami");
    const url = (value: string) => `${server.replace(/\/+$/, "")}/#token=${encodeURIComponent(value)}`;
    const masked = url(maskToken(token) ?? "");
    if (!options.open || !openBrowser(url(token))) console.log(options.redactToken ? masked : url(token));
    else console.log(`opened the dashboard at ${masked}`);
  });

registerMemoryCommands(program, client);

program.parseAsync(process.argv).catch((err) => {
  console.error(`error: ${errorMessage(err)}`);
  process.exit(1);
});

/** Hands a URL to the desktop's browser; false when there is none to hand it to. */
function openBrowser(url: string): boolean {
  if (!process.env.DISPLAY && !process.env.WAYLAND_DISPLAY && process.platform === "linux") return false;
  const opener = process.platform === "darwin" ? "open" : process.platform === "win32" ? "explorer" : "xdg-open";
  try {
    spawn(opener, [url], { stdio: "ignore", detached: true }).on("error", () => undefined).unref();
    return true;
  } catch {
    return false;
  }
}

function positiveInt(value: string, flag: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError(`${flag} must be a whole number of 1 or more`);
  return n;
}

