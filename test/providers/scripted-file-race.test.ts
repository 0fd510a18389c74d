import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadScriptFile } from "../../src/providers/scripted.ts";

const MAX_LOADS = 3000;
const MAX_SWAPS = 200_000;

// A directory inside ORKA_SCRIPTED_DIR swapped for a symlink to outside between the name check and
// the open must not lead the read outside: the open descriptor is judged too.
describe("a script file whose parent directory is swapped while it loads", () => {
  const root = mkdtempSync(join(tmpdir(), "orka-script-race-"));
  const scripts = join(root, "scripts");
  mkdirSync(join(scripts, "sub"), { recursive: true });
  mkdirSync(join(root, "outside"));
  writeFileSync(join(scripts, "sub", "turns.yaml"), "- text: inside\n");
  writeFileSync(join(root, "outside", "turns.yaml"), "- text: outside\n");
  const swapper = spawn(
    process.execPath,
    [
      "-e",
      `const fs = require("node:fs");
       const [sub, parked, outside, max] = process.argv.slice(1);
       for (let i = 0; i < Number(max); i++) {
         fs.renameSync(sub, parked);
         fs.symlinkSync(outside, sub);
         fs.unlinkSync(sub);
         fs.renameSync(parked, sub);
       }`,
      join(scripts, "sub"),
      join(scripts, "sub-parked"),
      join(root, "outside"),
      String(MAX_SWAPS),
    ],
    { stdio: "ignore" },
  );
  afterAll(() => {
    if (swapper.exitCode === null) swapper.kill("SIGKILL");
    rmSync(root, { recursive: true, force: true });
  });

  it("never reads the file outside", async () => {
    const texts = new Set<string>();
    for (let i = 0; i < MAX_LOADS && swapper.exitCode === null; i++) {
      const turns = await loadScriptFile("sub/turns.yaml", scripts).catch(() => undefined);
      if (turns) texts.add(turns[0].text!);
    }
    expect(texts.has("inside")).toBe(true);
    expect([...texts]).toEqual(["inside"]);
  }, 60_000);
});
