import { InvalidArgumentError, type Command } from "commander";
import { cliConfigPath, maskToken, readCliConfig, writeCliConfig } from "../config.ts";
import { readInput } from "../options.ts";

/** `orka config …`: the CLI config file. */
export function registerConfigCommands(program: Command): void {
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
}
