import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_GIT_SETTINGS, runGit } from "../../src/workspace/git.ts";

const TOKEN = "ghp_runnerTOKEN00000000000000000000000001";

// The one git runner, driven against a stand-in `git` on PATH that records how it was called: what
// a real git would be handed, and what happens when git hangs or floods its output.
describe("Orka's git runner", () => {
  const dir = mkdtempSync(join(tmpdir(), "orka-git-runner-"));
  const calls = join(dir, "calls");
  let path: string | undefined;

  beforeAll(() => {
    writeFileSync(
      join(dir, "git"),
      `#!/bin/sh
printf '%s\\n' "$@" > "${calls}.argv"
env > "${calls}.env"
case "$1" in
  hang) exec sleep 30 ;;
  flood) exec yes flood ;;
  chatty) yes noise | head -c 300000 >&2; echo "fatal: the real reason" >&2; exit 1 ;;
  leak)
    i=0
    while [ "$i" -lt "$GIT_CONFIG_COUNT" ]; do
      eval value=\\$GIT_CONFIG_VALUE_$i
      case "$value" in Authorization*) header="$value" ;; esac
      i=$((i + 1))
    done
    echo "fatal: sent $header" >&2
    echo "fatal: as $(echo "\${header#Authorization: Basic }" | base64 -d)" >&2
    exit 128 ;;
esac
`,
    );
    chmodSync(join(dir, "git"), 0o755);
    path = process.env.PATH;
    process.env.PATH = `${dir}:${path}`;
  });
  afterAll(() => {
    process.env.PATH = path;
    rmSync(dir, { recursive: true, force: true });
  });

  it("hands the credential to git only as a header in its environment, with no system, user or prompt configuration", async () => {
    const run = await runGit({ ...DEFAULT_GIT_SETTINGS, configFile: "/etc/orka/gitconfig" }, ["ls-remote", "https://github.com/o/r"], { credential: TOKEN });
    expect(run.code).toBe(0);
    expect(readFileSync(`${calls}.argv`, "utf8")).toBe("ls-remote\nhttps://github.com/o/r\n");
    const env = Object.fromEntries(readFileSync(`${calls}.env`, "utf8").trim().split("\n").map((line) => [line.slice(0, line.indexOf("=")), line.slice(line.indexOf("=") + 1)]));
    expect(env).toMatchObject({ GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/etc/orka/gitconfig", GIT_TERMINAL_PROMPT: "0", HOME: "/nonexistent" });
    const config = Array.from({ length: Number(env.GIT_CONFIG_COUNT) }, (_, i) => `${env[`GIT_CONFIG_KEY_${i}`]}=${env[`GIT_CONFIG_VALUE_${i}`]}`);
    expect(config).toContain(`http.extraHeader=Authorization: Basic ${Buffer.from(`x-access-token:${TOKEN}`).toString("base64")}`);
    expect(config).toEqual(expect.arrayContaining(["core.hooksPath=/dev/null", "http.followRedirects=false", "protocol.file.allow=never"]));
    // Nothing else of Orka's environment reaches git.
    expect(Object.keys(env).filter((name) => name.startsWith("ORKA_"))).toEqual([]);
  });

  it("removes the credential from what git prints, in every form", async () => {
    const run = await runGit(DEFAULT_GIT_SETTINGS, ["leak"], { credential: TOKEN });
    expect(run.code).toBe(128);
    expect(run.stderr).toMatch(/^fatal: sent \S.*\nfatal: as \S/);
    expect(run.stderr).not.toContain(TOKEN);
    expect(run.stderr).not.toContain(Buffer.from(`x-access-token:${TOKEN}`).toString("base64"));
  });

  it("stops a git that takes too long, and one that prints too much, with the reason", async () => {
    const started = Date.now();
    const hung = await runGit({ ...DEFAULT_GIT_SETTINGS, timeoutMs: 300 }, ["hang"]);
    expect(hung.code).toBe(-1);
    expect(hung.stderr).toContain("git hang took longer than 300 ms");
    expect(Date.now() - started).toBeLessThan(5_000);
    const flooded = await runGit(DEFAULT_GIT_SETTINGS, ["flood"], { maxOutputBytes: 64 * 1024 });
    expect(flooded.code).toBe(-1);
    expect(flooded.stderr).toContain("git flood printed more than 65536 bytes");
    expect(flooded.stdout.length).toBeLessThanOrEqual(64 * 1024);
  });

  it("keeps the end of a long stderr, where git says what went wrong", async () => {
    const chatty = await runGit(DEFAULT_GIT_SETTINGS, ["chatty"]);
    expect(chatty.code).toBe(1);
    expect(chatty.stderr.trim().split("\n").at(-1)).toBe("fatal: the real reason");
    expect(chatty.stderr.length).toBeLessThanOrEqual(128 * 1024);
    expect(chatty.stderr.split("\n").every((line) => line === "noise" || line === "fatal: the real reason" || line === "")).toBe(true);
  });
});
