import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import { parse, stringify } from "yaml";
import { z } from "zod";
import { parseWith } from "../resources/validate.ts";

export const DEFAULT_SERVER = "http://localhost:8080";

const cliConfigSchema = z.object({
  server: z.string().optional(),
  namespace: z.string().optional(),
  token: z.string().optional(),
});
export type CliConfig = z.infer<typeof cliConfigSchema>;

export function cliConfigPath(env: Record<string, string | undefined> = process.env): string {
  return env.ORKA_CLI_CONFIG || join(homedir(), ".orka", "config.yaml");
}

export function readCliConfig(path: string): CliConfig {
  if (!existsSync(path)) return {};
  return parseWith(cliConfigSchema, parse(readFileSync(path, "utf8")) ?? {}, path);
}

export function writeCliConfig(path: string, config: CliConfig): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  writeFileSync(path, stringify(config), { mode: 0o600 });
}

export function maskToken(token: string | undefined): string | undefined {
  if (!token) return token;
  return token.length <= 8 ? "****" : `${token.slice(0, 4)}…${token.slice(-4)}`;
}

/**
 * Points the CLI config at a server whose admin token lives in its data dir, so the CLI on this
 * machine needs no copying: when the config names no token yet, or names this server's token
 * (the same data dir, perhaps on a new port). A config that belongs to another server is left
 * alone. Returns the line to show on the console.
 */
export function claimCliConfig(path: string, server: string, token: string, tokenFile: string): string {
  let current: CliConfig;
  try {
    current = readCliConfig(path);
  } catch (err) {
    return `the CLI config ${path} was left as it is: ${(err as Error).message}`;
  }
  if (current.token && current.token !== token) {
    return `the CLI config ${path} names another server or token (server ${current.server ?? DEFAULT_SERVER}) and was left as it is; to use this server as admin: bin/orka config set-server ${server} && bin/orka config set-token --file ${tokenFile}`;
  }
  if (current.server !== server || current.token !== token) writeCliConfig(path, { ...current, server, token });
  return `the CLI config ${path} points at this server`;
}
