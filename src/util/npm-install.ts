import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, realpathSync, statSync } from "node:fs";
import { mkdir, readdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { basename, delimiter, dirname, join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { promisify } from "node:util";
import { redact } from "../policy/redact.ts";
import { OrkaError } from "./errors.ts";
import { isRunning } from "./process.ts";

const run = promisify(execFile);

/** An install downloads a few hundred MiB at most; past this the registry is not answering. */
const INSTALL_TIMEOUT_MS = 10 * 60_000;
const LOCK_POLL_MS = 250;

/** npm packages at pinned versions, installed together into one folder. */
export interface PinnedPackages {
  /** What is installed, in messages: "installing <what> with npm failed: …". */
  what: string;
  /** `name@version` of each package. */
  specs: string[];
  /** A path inside the folder that only a whole install has, and why the install is useless without it. */
  expects: { path: string; missing: string };
  /** What else the reader can do when no npm is found, e.g. "set the runtime's command". */
  withoutNpm?: string;
}

/**
 * Installs the packages from the npm registry into `target` unless they are there already. The install
 * goes to a temporary folder that is renamed into place when complete, so an existing folder is always a
 * whole install; a second caller meanwhile waits on the lock file the first one holds.
 */
export async function ensureNpmPackages(packages: PinnedPackages, target: string, signal?: AbortSignal): Promise<void> {
  const deadline = Date.now() + INSTALL_TIMEOUT_MS;
  while (!existsSync(target)) {
    signal?.throwIfAborted();
    if (Date.now() > deadline) throw installFailure(packages, `another install still holds ${target}.lock`);
    const release = await tryLock(`${target}.lock`);
    if (!release) {
      await sleep(LOCK_POLL_MS);
      continue;
    }
    try {
      if (!existsSync(target)) await install(packages, target, signal);
    } finally {
      await release();
    }
  }
  const expected = join(target, packages.expects.path);
  if (!existsSync(expected)) throw installFailure(packages, `${expected} is missing; delete ${target} to install it again`);
}

async function install(packages: PinnedPackages, target: string, signal?: AbortSignal): Promise<void> {
  await removeAbandonedStaging(target);
  const staging = `${target}.tmp-${randomBytes(6).toString("hex")}`;
  await mkdir(staging, { recursive: true });
  try {
    // Install scripts run: claude's puts its platform binary (an optional dependency) in place of its launcher.
    const args = ["install", "--prefix", staging, "--no-save", "--no-package-lock", "--no-audit", "--no-fund", "--loglevel=error", ...packages.specs];
    await run(process.execPath, [npmCli(packages), ...args], { timeout: INSTALL_TIMEOUT_MS, maxBuffer: 16 * 1024 * 1024, signal, env: installEnvironment() }).catch((err: { stderr?: string; message: string }) => {
      signal?.throwIfAborted();
      throw installFailure(packages, npmReason(err.stderr) ?? err.message);
    });
    if (!existsSync(join(staging, packages.expects.path))) throw installFailure(packages, packages.expects.missing);
    await rename(staging, target);
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

/** What npm and the packages' install scripts may see: how to reach the registry, never the server's secrets. */
const INSTALL_VARIABLES = /^(PATH|HOME|TMPDIR|LANG|LC_ALL|NODE_EXTRA_CA_CERTS|SSL_CERT_FILE|SSL_CERT_DIR|https?_proxy|HTTPS?_PROXY|no_proxy|NO_PROXY|npm_config_.*|NPM_CONFIG_.*)$/;

function installEnvironment(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([name]) => INSTALL_VARIABLES.test(name)));
}

/** Staging folders of installs that died midway: whoever holds the lock is the only one installing. */
async function removeAbandonedStaging(target: string): Promise<void> {
  const prefix = `${basename(target)}.tmp-`;
  const siblings = await readdir(dirname(target)).catch(() => []);
  for (const name of siblings.filter((n) => n.startsWith(prefix))) await rm(join(dirname(target), name), { recursive: true, force: true });
}

/**
 * npm's entry script, run with this process's Node: the npm shipped beside it (Node's own layout),
 * else the npm on PATH (a Node from the registry's node-<platform> package ships none).
 */
function npmCli(packages: PinnedPackages): string {
  const besideNode = [join(dirname(process.execPath), "..", "lib", "node_modules", "npm", "bin", "npm-cli.js"), join(dirname(process.execPath), "node_modules", "npm", "bin", "npm-cli.js")];
  const onPath = (process.env.PATH ?? "").split(delimiter).filter(Boolean).map((dir) => join(dir, "npm"));
  for (const candidate of [...besideNode, ...onPath]) {
    if (!existsSync(candidate)) continue;
    const script = realpathSync(candidate);
    if (script.endsWith(".js") && statSync(script).isFile()) return script;
  }
  const orElse = packages.withoutNpm ? `, or ${packages.withoutNpm}` : "";
  throw new OrkaError("failed_precondition", `cannot install ${packages.what}: no npm found beside Node or on PATH; install npm${orElse}`);
}

/** Takes the lock file, or answers undefined when a live process holds it; a dead holder's lock is taken over. */
async function tryLock(path: string): Promise<(() => Promise<void>) | undefined> {
  await mkdir(dirname(path), { recursive: true });
  try {
    await writeFile(path, String(process.pid), { flag: "wx", mode: 0o600 });
    return () => rm(path, { force: true });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
  }
  const holder = Number(await readFile(path, "utf8").catch(() => ""));
  if (Number.isInteger(holder) && holder > 0 && !isRunning(holder)) await rm(path, { force: true });
  return undefined;
}

/** The line of npm's error output that says why: not its error code fields, nor where its log is. */
function npmReason(stderr: string | undefined): string | undefined {
  const lines = (stderr ?? "").split("\n").map((line) => line.replace(/^npm (error|ERR!)\s*/, "").trim());
  return lines.find((line) => line !== "" && !/^(code|syscall|errno)\b|^A complete log of this run/.test(line)) ?? lines.find(Boolean);
}

function installFailure(packages: PinnedPackages, why: string): OrkaError {
  return new OrkaError("unavailable", `installing ${packages.what} with npm failed: ${redact(why.replace(/\s+/g, " "))}`);
}
