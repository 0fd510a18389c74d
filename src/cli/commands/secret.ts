import { InvalidArgumentError, type Command } from "commander";
import type { ApiClient } from "../client.ts";
import { outputOption } from "../options.ts";
import { render, type OutputFormat } from "../output.ts";

/** `orka secret create|list` (values are never shown). */
export function registerSecretCommands(program: Command, client: () => ApiClient): void {
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
}
