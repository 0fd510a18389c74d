import { spawn } from "node:child_process";
import { once } from "node:events";
import { createInterface } from "node:readline";

/**
 * A bench server script in its own process, so that serving it costs neither Orka's process nor a
 * peer's: the script prints `port <n>` as its first line. Closing kills it by its pid.
 */
export async function startChildServer(script: string, args: string[] = []) {
  const child = spawn(process.execPath, [script, ...args], { stdio: ["ignore", "pipe", "inherit"] });
  const [line] = (await once(createInterface({ input: child.stdout }), "line")) as [string];
  const port = /^port (\d+)$/.exec(line)?.[1];
  if (!port) throw new Error(`${script} did not start: ${line}`);
  return { port, url: `http://127.0.0.1:${port}`, pid: child.pid!, close: () => void child.kill() };
}
