import { execFile } from "node:child_process";
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterEach, beforeEach, describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "../..");
const SCRIPT = join(ROOT, "scripts/test-prerequisites");
const PACKAGES = ["bubblewrap", "util-linux", "python3", "git", "ca-certificates", "chromium", "fonts-dejavu-core"];

// Stand-ins on PATH: who we are, what dpkg knows, and apt-get/sudo that only record their calls.
const FAKES: Record<string, string> = {
  id: 'echo "$FAKE_UID"',
  "dpkg-query": `status=0
for arg in "$@"; do case "$arg" in -*) continue ;; esac
  case " $FAKE_INSTALLED " in *" $arg "*) echo "$arg ii " ;; *) echo "dpkg-query: no packages found matching $arg" >&2; status=1 ;; esac
done
exit $status`,
  // Like apt-get, fails at once while another run holds the dpkg lock, unless told to wait for it.
  "apt-get": `case " $* " in *" DPkg::Lock::Timeout="*) ;; *) if [ -n "$FAKE_DPKG_LOCKED" ]; then
  echo "E: Could not get lock /var/lib/dpkg/lock-frontend. It is held by process 4242 (apt-get)" >&2; exit 100; fi ;; esac
echo "apt-get $*" >> "$FAKE_CALLS"`,
  sudo: 'echo "sudo $*" >> "$FAKE_CALLS"',
};

describe("scripts/test-prerequisites", () => {
  let bin: string;
  let calls: string;
  beforeEach(() => {
    bin = mkdtempSync(join(tmpdir(), "orka-prereq-"));
    calls = join(bin, "calls.log");
    writeFileSync(calls, "");
    for (const [name, body] of Object.entries(FAKES)) {
      writeFileSync(join(bin, name), `#!/bin/sh\n${body}\n`);
      chmodSync(join(bin, name), 0o755);
    }
  });
  afterEach(() => rmSync(bin, { recursive: true, force: true }));

  const run = (uid: number, installed: string[], extraEnv: Record<string, string> = {}) =>
    promisify(execFile)(SCRIPT, [], {
      env: { PATH: `${bin}:/usr/bin:/bin`, FAKE_UID: String(uid), FAKE_INSTALLED: installed.join(" "), FAKE_CALLS: calls, ...extraEnv },
      timeout: 10_000,
    }).then(
      ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
      (err) => ({ code: err.code as number, stdout: String(err.stdout), stderr: String(err.stderr) }),
    );
  const recorded = () => readFileSync(calls, "utf8").split("\n").filter(Boolean);
  const without = (...names: string[]) => PACKAGES.filter((p) => !names.includes(p));

  it("does nothing, quickly, when every package is installed", async () => {
    const started = Date.now();
    expect(await run(1000, PACKAGES)).toEqual({ code: 0, stdout: "", stderr: "" });
    expect(Date.now() - started).toBeLessThan(2000);
    expect(recorded()).toEqual([]);
  });

  it("without root, stops with one line naming the command that installs what is missing", async () => {
    const result = await run(1000, without("bubblewrap", "chromium"));
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      "orka: the tests need bubblewrap chromium; run as root: sudo apt-get update && sudo apt-get install -y -qq --no-install-recommends bubblewrap chromium\n",
    );
    expect(recorded()).toEqual([]);
  });

  it("as root, updates the package lists and installs only what is missing", async () => {
    const result = await run(0, without("chromium", "fonts-dejavu-core"));
    expect(result.code).toBe(0);
    expect(recorded()).toEqual([
      "apt-get -o DPkg::Lock::Timeout=600 update -qq",
      "apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends chromium fonts-dejavu-core",
    ]);
  });

  it("as root, waits for another apt run holding the dpkg lock instead of failing", async () => {
    const result = await run(0, without("chromium"), { FAKE_DPKG_LOCKED: "1" });
    expect(result).toMatchObject({ code: 0, stderr: "orka: installing chromium for the tests (apt-get)\n" });
    expect(recorded()).toHaveLength(2);
  });

  it("is the one step `npm test` and .ci/run take before anything else", () => {
    expect(JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).scripts.test).toMatch(/^scripts\/test-prerequisites && /);
    expect(readFileSync(join(ROOT, ".ci/run"), "utf8")).toMatch(/^[^#\n].*scripts\/test-prerequisites/m);
    expect(readFileSync(join(ROOT, ".ci/run"), "utf8")).not.toContain("apt-get");
  });
});
