import { execFile, spawn } from "node:child_process";
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterEach, beforeEach, expect, it } from "vitest";

const SCRIPT = resolve(import.meta.dirname, "../../scripts/orka-node");
const RUNS = 4;

// A fake `npm` that rebuilds node_modules slowly, the way `npm ci` deletes and refills it.
const FAKE_NPM = `#!/bin/sh
echo "$*" >> "$FAKE_NPM_LOG"
rm -rf node_modules
mkdir -p node_modules/tiny
sleep 0.5
echo 'module.exports = 42' > node_modules/tiny/index.js
`;

let project: string;
let npmLog: string;

/** A scratch checkout: the script, a lockfile, and a PATH whose npm is the fake one. */
function scratchProject(): string {
  const dir = mkdtempSync(join(tmpdir(), "orka-node-"));
  mkdirSync(join(dir, "scripts"));
  copyFileSync(SCRIPT, join(dir, "scripts/orka-node"));
  writeFileSync(join(dir, "package.json"), '{"name":"scratch","dependencies":{"tiny":"1.0.0"}}\n');
  writeFileSync(join(dir, "package-lock.json"), '{"lockfileVersion":3}\n');
  mkdirSync(join(dir, "bin"));
  writeFileSync(join(dir, "bin/npm"), FAKE_NPM);
  chmodSync(join(dir, "bin/npm"), 0o755);
  return dir;
}

const env = () => ({ ...process.env, PATH: `${join(project, "bin")}:${dirname(process.execPath)}:/usr/bin:/bin`, FAKE_NPM_LOG: npmLog });

/** Runs the script with a command that reads the installed tree a while after it starts. */
function run(command = "sleep 0.3; cat node_modules/tiny/index.js") {
  return promisify(execFile)(join(project, "scripts/orka-node"), ["sh", "-c", command], { cwd: project, env: env(), timeout: 20_000 }).then(
    ({ stdout }) => ({ code: 0, stdout, stderr: "" }),
    (err) => ({ code: (err.code as number) ?? 1, stdout: String(err.stdout ?? ""), stderr: String(err.stderr ?? "") }),
  );
}

const installs = () => readFileSync(npmLog, "utf8").split("\n").filter(Boolean);

beforeEach(() => {
  project = scratchProject();
  npmLog = join(project, "npm.log");
  writeFileSync(npmLog, "");
});
afterEach(() => rmSync(project, { recursive: true, force: true }));

it("concurrent first runs install once, and every run finds the whole tree", async () => {
  const results = await Promise.all(Array.from({ length: RUNS }, () => run()));
  for (const result of results) expect(result).toMatchObject({ code: 0, stdout: "module.exports = 42\n" });
  expect(installs()).toEqual(["ci --no-audit --no-fund"]);
});

it("never replaces a tree another run is using, and says so", async () => {
  expect((await run()).code).toBe(0);
  const user = spawn(join(project, "scripts/orka-node"), ["sh", "-c", "echo started; sleep 3; cat node_modules/tiny/index.js"], { cwd: project, env: env() });
  try {
    let output = "";
    user.stdout.on("data", (chunk) => (output += chunk));
    await new Promise<void>((started) => user.stdout.once("data", () => started()));
    writeFileSync(join(project, "package-lock.json"), '{"lockfileVersion":3,"changed":true}\n');

    const refused = await run();
    expect(refused.code).not.toBe(0);
    expect(refused.stderr.trim()).toBe(
      "orka: the npm packages need installing (package-lock.json or Node changed), but another run is using node_modules; stop it and run this again",
    );
    const code = await new Promise((exited) => user.once("exit", exited));
    expect(code).toBe(0);
    expect(output).toBe("started\nmodule.exports = 42\n");
    expect(installs()).toHaveLength(1);

    expect(await run()).toMatchObject({ code: 0, stdout: "module.exports = 42\n" });
    expect(installs()).toHaveLength(2);
  } finally {
    if (user.exitCode === null && user.signalCode === null) user.kill();
  }
});
