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
