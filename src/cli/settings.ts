import type { Command } from "commander";
import { cliConfigPath, DEFAULT_SERVER, readCliConfig } from "./config.ts";

/** The options every command takes, as given on the command line. */
export interface GlobalOptions {
  server?: string;
  namespace?: string;
  token?: string;
  txnToken?: string;
}

export interface CliSettings {
  server: string;
  token?: string;
  txnToken?: string;
  namespace?: string;
}

/** Flags, then environment, then the config file. */
export function cliSettings(program: Command): CliSettings {
  const flags = program.opts<GlobalOptions>();
  const config = readCliConfig(cliConfigPath());
  return {
    server: flags.server ?? process.env.ORKA_SERVER ?? config.server ?? DEFAULT_SERVER,
    token: flags.token ?? process.env.ORKA_TOKEN ?? config.token,
    txnToken: flags.txnToken ?? process.env.ORKA_TXN_TOKEN,
    namespace: flags.namespace ?? process.env.ORKA_NAMESPACE ?? config.namespace,
  };
}
