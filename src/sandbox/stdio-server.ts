import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DEFAULT_LIMITS, spawnSandboxed, type SandboxedProcess } from "./bwrap.ts";
import { handToSandboxUser } from "./ownership.ts";

/** Where the operator's MCP servers directory (`ORKA_MCP_SERVERS_DIR`) is seen inside the sandbox, read-only. */
const MCP_SERVERS_MOUNT = "/mcp-servers";

/** Executables of packages installed there (`npm install --prefix`) are found by name. */
const SERVER_PATH = `${MCP_SERVERS_MOUNT}/node_modules/.bin:${MCP_SERVERS_MOUNT}/bin:/usr/local/bin:/usr/bin:/bin`;

/**
 * Starts stdio MCP servers in the sandbox: no network (a server that needs it is one to reach over
 * HTTP, behind the egress guard), the system and the servers directory read-only, an empty
 * /workspace of its own that is removed when the process has exited, and only the Tool's env.
 */
export function sandboxedStdioLauncher(options: { serversDir?: string }) {
  return async (server: { command: string[]; env: Record<string, string> }): Promise<SandboxedProcess> => {
    const workDir = await mkdtemp(join(tmpdir(), "orka-mcp-"));
    const removeWorkDir = () => rm(workDir, { recursive: true, force: true });
    try {
      await handToSandboxUser(workDir);
      const child = spawnSandboxed({
        command: server.command,
        workDir,
        extraBinds: options.serversDir ? [{ host: options.serversDir, sandbox: MCP_SERVERS_MOUNT, readOnly: true }] : [],
        env: { PATH: SERVER_PATH, ...server.env },
        network: false,
        limits: DEFAULT_LIMITS,
      });
      return { ...child, exited: child.exited.finally(removeWorkDir) };
    } catch (err) {
      await removeWorkDir();
      throw err;
    }
  };
}
