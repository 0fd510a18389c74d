import { InvalidArgumentError, type Command } from "commander";
import { pluralOf, resolveKindName, type KindName } from "../../resources/kinds.ts";
import { applyDocuments, readApplySources, SERVER_PLACEHOLDER } from "../apply.ts";
import type { ApiClient } from "../client.ts";
import { outputOption } from "../options.ts";
import { render, type OutputFormat } from "../output.ts";

function kindArgument(typed: string): KindName {
  const kind = resolveKindName(typed);
  if (!kind) throw new InvalidArgumentError(`unknown kind "${typed}"; use task, agent, provider, tool, skill or secret`);
  return kind;
}

/** `orka apply`, `orka get` and `orka delete`: objects of any kind. */
export function registerObjectCommands(program: Command, client: () => ApiClient): void {
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
}
