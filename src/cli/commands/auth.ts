import { spawn } from "node:child_process";
import { InvalidArgumentError, Option, type Command } from "commander";
import type { ApiClient } from "../client.ts";
import { maskToken } from "../config.ts";
import { outputOption } from "../options.ts";
import { renderRows, type Column, type OutputFormat } from "../output.ts";
import type { CliSettings, GlobalOptions } from "../settings.ts";

/** `orka auth …`, `orka token …` and `orka login`: credentials, namespace tokens and the dashboard. */
export function registerAuthCommands(program: Command, client: () => ApiClient, settings: () => CliSettings): void {
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
}

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
