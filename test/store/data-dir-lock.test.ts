import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { lockDataDir } from "../../src/store/data-dir-lock.ts";

describe("the data dir lock", () => {
  let dir = "";
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("takes over a pid file naming its own pid, as a restarted container's server finds it", () => {
    dir = mkdtempSync(join(tmpdir(), "orka-lock-"));
    writeFileSync(join(dir, "server.pid"), `${process.pid}\n`);
    const lock = lockDataDir(dir);
    expect(readFileSync(join(dir, "server.pid"), "utf8").trim()).toBe(String(process.pid));
    lock.release();
    expect(() => readFileSync(join(dir, "server.pid"))).toThrow();
  });
});
