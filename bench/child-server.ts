import { spawn } from "node:child_process";
import { once } from "node:events";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createInterface } from "node:readline";

/** How long a closed bench server has to end after SIGTERM before it is killed. */
const CLOSE_GRACE_MS = 10_000;

/**
 * A bench server script in its own process, so that serving it costs neither Orka's process nor a
 * peer's: the script prints `port <n>` as its first line, and runs with `nodeFlags`. `close()` stops it
 * by its pid (SIGTERM, then SIGKILL) and answers once it has ended, so what is measured next runs alone.
 */
export async function startChildServer(script: string, args: string[] = [], nodeFlags: string[] = []) {
  const child = spawn(process.execPath, [...nodeFlags, script, ...args], { stdio: ["ignore", "pipe", "inherit"] });
  // Settles once the process has ended (also when it could not be started at all).
  const exited = once(child, "exit").catch(() => undefined);
  // A script that ends (or closes its output) before it prints its port did not start.
  const lines = createInterface({ input: child.stdout });
  const first = once(lines, "line").then(([line]) => line as string);
  const ended = once(lines, "close").then(() => "(it ended without printing its port)");
  const line = await Promise.race([first, ended]);
  const port = /^port (\d+)$/.exec(line)?.[1];
  if (!port) {
    child.kill();
    throw new Error(`${script} did not start: ${line}`);
  }
  const close = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill();
    const killer = setTimeout(() => child.kill("SIGKILL"), CLOSE_GRACE_MS);
    await exited;
    clearTimeout(killer);
  };
  return { port, url: `http://127.0.0.1:${port}`, pid: child.pid!, close };
}

/** The other side, in a bench server script: listens on loopback and, once `ready` too, prints the `port <n>` line `startChildServer` waits for. */
export async function listenAndAnnounce(server: Server, ready: Promise<void> = Promise.resolve()): Promise<void> {
  server.listen(0, "127.0.0.1");
  await Promise.all([once(server, "listening"), ready]);
  console.log(`port ${(server.address() as AddressInfo).port}`);
}
