import { execFile, spawn, spawnSync } from "node:child_process";
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
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

// A `node` that records how many copies run at once: each start appends "+", each exit "-".
const COUNTING_NODE = `#!/bin/sh
echo + >> "$FAKE_NODE_LOG"
sleep 0.4
"$REAL_NODE" "$@"
status=$?
echo - >> "$FAKE_NODE_LOG"
exit $status
`;

let project: string;
let npmLog: string;
const scratchDirs: string[] = [];

/** A scratch checkout: the script, a lockfile, and a PATH whose npm is the fake one. */
function scratchProject(): string {
  const dir = mkdtempSync(join(tmpdir(), "orka-node-"));
  scratchDirs.push(dir);
  mkdirSync(join(dir, "scripts"));
  copyFileSync(SCRIPT, join(dir, "scripts/orka-node"));
  writeFileSync(join(dir, "package.json"), '{"name":"scratch","dependencies":{"tiny":"1.0.0"}}\n');
  writeFileSync(join(dir, "package-lock.json"), '{"lockfileVersion":3}\n');
  mkdirSync(join(dir, "bin"));
  writeFileSync(join(dir, "bin/npm"), FAKE_NPM);
  chmodSync(join(dir, "bin/npm"), 0o755);
  return dir;
}

const env = (dir = project) => ({ ...process.env, PATH: `${join(dir, "bin")}:${dirname(process.execPath)}:/usr/bin:/bin`, FAKE_NPM_LOG: npmLog });

/** Runs the script with a command that reads the installed tree a while after it starts. */
function run(command = "sleep 0.3; cat node_modules/tiny/index.js", dir = project) {
  return runIn(dir, join(dir, "scripts/orka-node"), ["sh", "-c", command], env(dir));
}

function runIn(cwd: string, file: string, args: string[], childEnv: NodeJS.ProcessEnv) {
  return promisify(execFile)(file, args, { cwd, env: childEnv, timeout: 20_000 }).then(
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
afterEach(() => {
  for (const dir of scratchDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

it("concurrent first runs install once, and every run finds the whole tree", async () => {
  const results = await Promise.all(Array.from({ length: RUNS }, () => run()));
  for (const result of results) expect(result).toMatchObject({ code: 0, stdout: "module.exports = 42\n" });
  expect(installs()).toEqual(["ci --no-audit --no-fund"]);
  // Any user may lock them later; flock needs no write access, but creating them does.
  for (const lock of ["install.lock", "in-use.lock"]) expect(statSync(join(project, ".node", lock)).mode & 0o777).toBe(0o666);
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

it("never installs through a node_modules link into another checkout, and names the link", async () => {
  expect((await run()).code).toBe(0);
  const owner = project;
  const other = scratchProject();
  symlinkSync(join(owner, "node_modules"), join(other, "node_modules"));
  writeFileSync(join(other, "package-lock.json"), '{"lockfileVersion":3,"other":true}\n');

  const refused = await run("cat node_modules/tiny/index.js", other);
  expect(refused.code).not.toBe(0);
  expect(refused.stderr.trim()).toBe(
    `orka: node_modules is a link to ${join(owner, "node_modules")} and the lockfiles differ (package-lock.json here is not the one it was installed from); install in the checkout that owns it, or replace the link with a folder of its own`,
  );
  expect(installs()).toHaveLength(1);
  expect(await run()).toMatchObject({ code: 0, stdout: "module.exports = 42\n" });

  // A checkout with the same lockfile uses the shared tree as it is.
  copyFileSync(join(owner, "package-lock.json"), join(other, "package-lock.json"));
  expect(await run("cat node_modules/tiny/index.js", other)).toMatchObject({ code: 0, stdout: "module.exports = 42\n" });
  expect(installs()).toHaveLength(1);
});

it("runs whose packages are installed start side by side, not one after another", async () => {
  expect((await run()).code).toBe(0);
  const nodeLog = join(project, "node.log");
  writeFileSync(nodeLog, "");
  writeFileSync(join(project, "bin/node"), COUNTING_NODE);
  chmodSync(join(project, "bin/node"), 0o755);
  const countingEnv = { ...env(), FAKE_NODE_LOG: nodeLog, REAL_NODE: process.execPath };

  const results = await Promise.all(Array.from({ length: 3 }, () => runIn(project, join(project, "scripts/orka-node"), ["true"], countingEnv)));
  for (const result of results) expect(result.code).toBe(0);
  let running = 0;
  let mostAtOnce = 0;
  for (const mark of readFileSync(nodeLog, "utf8").split("\n").filter(Boolean)) {
    running += mark === "+" ? 1 : -1;
    mostAtOnce = Math.max(mostAtOnce, running);
  }
  expect(mostAtOnce).toBeGreaterThan(1);
  expect(installs()).toHaveLength(1);
});

// Root's runs create the lock files; another user must still be able to run (and be told when it cannot install).
const runuser = spawnSync("sh", ["-c", "command -v runuser"], { encoding: "utf8" }).stdout.trim();
it.skipIf(!runuser || process.getuid?.() !== 0)("works for a user other than the one who installed, and says when that user cannot install", async () => {
  mkdirSync(join(project, ".node"));
  // The lock files as an earlier run of root's left them: readable by all, writable by root only.
  for (const lock of ["install.lock", "in-use.lock"]) writeFileSync(join(project, ".node", lock), "", { mode: 0o644 });
  expect((await run()).code).toBe(0);
  chmodSync(project, 0o755);
  const asNobody = (command: string) =>
    runIn(project, runuser, ["-u", "nobody", "--", "env", `PATH=${env().PATH}`, join(project, "scripts/orka-node"), "sh", "-c", command], env());

  expect(await asNobody("cat node_modules/tiny/index.js")).toMatchObject({ code: 0, stdout: "module.exports = 42\n" });

  writeFileSync(join(project, "package-lock.json"), '{"lockfileVersion":3,"changed":true}\n');
  const refused = await asNobody("true");
  expect(refused.code).not.toBe(0);
  expect(refused.stderr.trim()).toBe(
    `orka: the npm packages need installing (package-lock.json or Node changed), but ${project} is not writable by user nobody; run this once as its owner`,
  );
  expect(installs()).toHaveLength(1);
  expect(existsSync(join(project, "node_modules/tiny/index.js"))).toBe(true);
});

it("says so when node_modules is a link into a folder that does not exist", async () => {
  symlinkSync(join(project, "gone/deeper/node_modules"), join(project, "node_modules"));
  const result = await run("true");
  expect(result.code).not.toBe(0);
  expect(result.stderr.trim()).toBe(
    `orka: cannot resolve ${join(project, "node_modules")} (a link into a missing folder?); remove it and run this again`,
  );
  expect(installs()).toEqual([]);
});
