import { execFileSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterEach, expect, it } from "vitest";

const GITIGNORE = resolve(import.meta.dirname, "../../.gitignore");
let dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  dirs = [];
});

/** What `git status` lists as untracked in a scratch repository holding the project's .gitignore. */
function untrackedWith(create: (checkout: string, elsewhere: string) => void): string[] {
  const checkout = mkdtempSync(join(tmpdir(), "orka-gitignore-"));
  const elsewhere = mkdtempSync(join(tmpdir(), "orka-gitignore-shared-"));
  dirs.push(checkout, elsewhere);
  execFileSync("git", ["init", "-q", checkout]);
  copyFileSync(GITIGNORE, join(checkout, ".gitignore"));
  create(checkout, elsewhere);
  const status = execFileSync("git", ["status", "--porcelain", "--untracked-files=all"], { cwd: checkout, encoding: "utf8" });
  return status.split("\n").filter(Boolean);
}

it("ignores node_modules and .node whether they are folders or links to a shared copy", () => {
  const asFolders = untrackedWith((checkout) => {
    for (const name of ["node_modules", ".node"]) mkdirSync(join(checkout, name, "pkg"), { recursive: true });
  });
  const asLinks = untrackedWith((checkout, elsewhere) => {
    for (const name of ["node_modules", ".node"]) {
      mkdirSync(join(elsewhere, name));
      symlinkSync(join(elsewhere, name), join(checkout, name));
    }
  });
  expect(asFolders).toEqual(["?? .gitignore"]);
  expect(asLinks).toEqual(["?? .gitignore"]);
});
