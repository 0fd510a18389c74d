// The orka command: its options and commands, run on the process's arguments (main.ts loads it).
import { Command } from "commander";
import { errorMessage } from "../util/errors.ts";
import { ApiClient } from "./client.ts";
import { registerAuthCommands } from "./commands/auth.ts";
import { registerConfigCommands } from "./commands/config.ts";
import { registerMemoryCommands } from "./commands/memory.ts";
import { registerObjectCommands } from "./commands/objects.ts";
import { registerSecretCommands } from "./commands/secret.ts";
import { registerServeCommand } from "./commands/serve.ts";
import { registerTaskCommands } from "./commands/task.ts";
import { DEFAULT_SERVER } from "./config.ts";
import { cliSettings } from "./settings.ts";

const program = new Command("orka")
  .description("Run AI agents as durable, observable, policy-checked Tasks")
  .option("-s, --server <url>", `Orka server (default: config file, then ${DEFAULT_SERVER})`)
  .option("-n, --namespace <ns>", "namespace (default: config file, then the token's, then default)")
  .option("-t, --token <token>", "API token (default: config file or ORKA_TOKEN)")
  .option("--txn-token <token>", "transaction token, sent as the Txn-Token header (default: ORKA_TXN_TOKEN)")
  .showHelpAfterError();

const settings = () => cliSettings(program);
const client = () => new ApiClient(settings());

// The order here is the order `orka --help` lists the commands in.
registerServeCommand(program);
registerObjectCommands(program, client);
registerTaskCommands(program, client);
registerSecretCommands(program, client);
registerConfigCommands(program);
registerAuthCommands(program, client, settings);
registerMemoryCommands(program, client);

program.parseAsync(process.argv).catch((err) => {
  console.error(`error: ${errorMessage(err)}`);
  process.exit(1);
});
