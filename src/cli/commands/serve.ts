import { homedir } from "node:os";
import type { Command } from "commander";
import { serverConfigFrom } from "../../config.ts";

/** `orka serve`: the server (API, controller and local workers) in this process. */
export function registerServeCommand(program: Command): void {
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
      const { startOrka } = await import("../../server.ts");
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
}
