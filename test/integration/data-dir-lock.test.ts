import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { startOrkaServer, type OrkaUnderTest } from "../helpers/orka-server.ts";

// Each test starts two server processes, which takes a while on a loaded machine.
const servers: OrkaUnderTest[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.stop();
});

it("a second server on the same data dir is refused with one line naming the first, which keeps serving", async () => {
  const first = await startOrkaServer();
  servers.push(first);
  const state = join(first.dataDir, "state");

  // Should it start after all, it is stopped with the rest.
  const second = startOrkaServer({ ORKA_DATA_DIR: state }).then((server) => servers.push(server));
  await expect(second).rejects.toThrow(
    new Error(`orka serve exited with 1:
error: another Orka server (pid ${first.pid}) is using the data dir ${state}; stop it, or give this server its own --data-dir (if pid ${first.pid} is no Orka server, delete ${join(state, "server.pid")})\n`),
  );
  expect(readFileSync(join(state, "server.pid"), "utf8")).toBe(`${first.pid}\n`);
  expect((await first.api("GET", "/api/v1/tasks")).status).toBe(200);
}, 90_000);

it("a server killed with -9 leaves a stale pid that does not block the next start", async () => {
  const server = await startOrkaServer();
  servers.push(server);
  const pidFile = join(server.dataDir, "state/server.pid");
  const killed = server.pid;
  await server.kill();
  expect(readFileSync(pidFile, "utf8")).toBe(`${killed}\n`);

  await server.restart();
  expect(server.pid).not.toBe(killed);
  expect(readFileSync(pidFile, "utf8")).toBe(`${server.pid}\n`);
  expect((await server.api("GET", "/api/v1/tasks")).status).toBe(200);
}, 90_000);
