import { constants, existsSync, statSync } from "node:fs";
import { access, lstat, mkdir, mkdtemp, realpath, writeFile } from "node:fs/promises";
import { basename, dirname, isAbsolute, join, relative, resolve } from "node:path";
import { commandExit, spawnSandboxed, type SandboxLimits } from "../sandbox/bwrap.ts";
import { handToSandboxUser } from "../sandbox/ownership.ts";
import { BoundedText, TailText } from "../util/bounded-text.ts";
import { OrkaError } from "../util/errors.ts";
import type { RuntimeAdapter, RuntimeLaunch, SessionFile, SessionPaths } from "./adapter.ts";

/**
 * A coding CLI's session on this machine: a private root it may write to, and the CLI run in a bubblewrap
 * sandbox with an environment built from nothing. The sandbox has its own pid namespace (the CLI sees
 * neither the worker nor the server, and nothing it starts outlives it), the host's network (it reaches
 * its provider proxy and broker on loopback), and of the host's files only the system read-only, its
 * private root and workspace read-write, and read-only what it runs: Node, its command, the paths given.
 * When Orka runs as root, the CLI runs as nobody (uid 65534), and its private root is handed to that user.
 */

const SESSION_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const SYSTEM_PATH = ["/usr/local/bin", "/usr/bin", "/bin"];
const PRIVATE_DIR_MODE = 0o700;
const PRIVATE_FILE_MODE = 0o600;
export const SESSION_STDOUT_LIMIT_BYTES = 4 * 1024 * 1024;
const SESSION_STDERR_TAIL_BYTES = 8 * 1024;
/** How long a CLI has to exit after SIGTERM before its sandbox is killed. */
const SESSION_KILL_GRACE_MS = 5_000;
/** A session runs for as long as its Task allows: its limits guard the machine, not the Task's time. */
const SESSION_LIMITS: SandboxLimits = {
  cpuSeconds: 24 * 3600,
  memoryBytes: 64 * 1024 ** 3,
  processes: 1024,
  fileSizeBytes: 1024 ** 3,
  openFiles: 4096,
  tmpBytes: 1024 ** 3,
};

export interface SessionOutcome {
  exitCode: number | null;
  signal: string | null;
  /** The first `SESSION_STDOUT_LIMIT_BYTES` of stdout, with a closing note when more was cut. */
  stdout: string;
  stdoutTruncated: boolean;
  /** The last `SESSION_STDERR_TAIL_BYTES` of stderr. */
  stderrTail: string;
}

export interface RunSessionOptions {
  /** The executable and its leading arguments (the pinned CLI, or the operator's replacement). */
  command: string[];
  adapter: RuntimeAdapter;
  launch: RuntimeLaunch;
  /** Where the CLI starts: the workspace or a directory below it. */
  cwd: string;
  /** Every chunk the CLI writes on stdout or stderr, as it comes. */
  onOutput?: (chunk: string) => void;
  /** Host paths the CLI may read besides the system, Node and its command's own files (the cached CLI's package, the operator's read paths); bound read-only at the same paths. */
  readPaths?: string[];
  /** Aborting ends the session: SIGTERM to every process in its sandbox, SIGKILL to the sandbox after the grace period. */
  signal: AbortSignal;
}

/** Creates `<baseDir>/<sessionId>-<random>/` with home, tmp, workspace and the XDG directories, all mode 0700. */
export async function prepareSessionPaths(baseDir: string, sessionId: string): Promise<SessionPaths> {
  if (!SESSION_ID.test(sessionId)) {
    throw new OrkaError("invalid_argument", `session id ${JSON.stringify(sessionId.slice(0, 140))} is not valid: use 1 to 128 letters, digits, '.', '_' or '-', starting with a letter or digit`);
  }
  await assertRealDirectory(baseDir);
  const root = await mkdtemp(join(baseDir, `${sessionId}-`));
  const xdgRoot = join(root, "xdg");
  const paths: SessionPaths = {
    root,
    home: join(root, "home"),
    tmp: join(root, "tmp"),
    workspace: join(root, "workspace"),
    xdg: { config: join(xdgRoot, "config"), cache: join(xdgRoot, "cache"), data: join(xdgRoot, "data"), state: join(xdgRoot, "state") },
  };
  for (const dir of [paths.home, paths.tmp, paths.workspace, xdgRoot, ...Object.values(paths.xdg)]) {
    await mkdir(dir, { mode: PRIVATE_DIR_MODE });
  }
  return paths;
}

async function assertRealDirectory(dir: string): Promise<void> {
  const refuse = (why: string) => new OrkaError("failed_precondition", `the sessions directory ${dir} ${why}`);
  if (!isAbsolute(dir) || resolve(dir) !== dir) throw refuse("must be an absolute, normalized path");
  const stat = await lstat(dir).catch(() => undefined);
  if (!stat?.isDirectory()) throw refuse("must be an existing directory (not a symbolic link)");
  const real = await realpath(dir);
  if (real !== dir) throw refuse(`must be its real path (${real}), with no symbolic link on the way`);
}

/** Runs the CLI of one session to its end; resolves once it has exited and its sandbox is gone. */
export async function runSession(options: RunSessionOptions): Promise<SessionOutcome> {
  const { command, adapter, launch, signal } = options;
  const [executable, ...leadingArgs] = command;
  if (!executable) throw new OrkaError("invalid_argument", "the session's command is empty: name the CLI's executable");
  const cwd = await sessionCwd(launch.paths, options.cwd);
  const env = sessionEnvironment(launch, executable, adapter.env(launch), cwd);
  await findExecutable(executable, env.PATH!.split(":"));
  await writeSessionFiles(launch.paths.root, adapter.files(launch));
  await handToSandboxUser(launch.paths.root);
  signal.throwIfAborted();
  const binds: SessionBinds = { writable: [launch.paths.root, launch.paths.workspace], readOnly: readOnlyPaths(command, options.readPaths ?? []) };
  return spawnSession([executable, ...leadingArgs, ...adapter.argv(launch)], { cwd, env, binds, signal, onOutput: options.onOutput });
}

/**
 * The host paths a CLI reads besides the system: Node's installation, the files its command names
 * (never their directories, which may hold anything), and the caller's.
 */
function readOnlyPaths(command: string[], readPaths: string[]): string[] {
  const commandPaths = command.filter((arg) => isAbsolute(arg) && existsSync(arg) && statSync(arg).isFile());
  const paths = [...new Set([nodeInstallation(), ...commandPaths, ...readPaths].map((path) => resolve(path)))].filter((path) => existsSync(path));
  // A path inside another is bound with it: binding it again would go through what is inside (a `.bin` link into the package).
  return paths.filter((path) => !paths.some((other) => other !== path && isInside(other, path)));
}

/**
 * The directory tree Node is installed in (`<prefix>/bin/node` with `<prefix>/include/node`: the
 * prefix), which a CLI run with it needs whole; a node binary elsewhere (`~/bin/node`) is bound alone.
 */
function nodeInstallation(): string {
  const binDir = dirname(process.execPath);
  const prefix = dirname(binDir);
  return basename(binDir) === "bin" && existsSync(join(prefix, "include", "node")) ? prefix : process.execPath;
}

/** Fails before the sandbox is set up when the command names nothing that can run, as a plain spawn would. */
async function findExecutable(executable: string, pathDirs: string[]): Promise<void> {
  const candidates = executable.includes("/") ? [resolve(executable)] : pathDirs.map((dir) => join(dir, executable));
  for (const candidate of candidates) {
    if (await access(candidate, constants.X_OK).then(() => true, () => false)) return;
  }
  throw new OrkaError("failed_precondition", `the session's CLI ${executable} could not be started: no such executable${executable.includes("/") ? "" : ` on the session's PATH (${pathDirs.join(":")})`}`);
}

async function sessionCwd(paths: SessionPaths, cwd: string): Promise<string> {
  const real = await realpath(cwd).catch(() => undefined);
  const workspace = await realpath(paths.workspace);
  if (!real || !isInside(workspace, real)) {
    throw new OrkaError("invalid_argument", `the session's working directory ${cwd} must be an existing directory inside its workspace ${paths.workspace}`);
  }
  return real;
}

function isInside(parent: string, path: string): boolean {
  const rel = relative(parent, path);
  return rel === "" || (rel !== ".." && !rel.startsWith("../") && !isAbsolute(rel));
}

/**
 * The CLI's whole environment: the session's own directories, a system PATH, and what the adapter adds.
 * PATH leads with the Node that runs Orka (a CLI installed from npm starts with `#!/usr/bin/env node`)
 * and the directory of an absolute executable (a cached CLI's `.bin`).
 */
function sessionEnvironment(launch: RuntimeLaunch, executable: string, adapterEnv: Record<string, string>, cwd: string): Record<string, string> {
  const { paths } = launch;
  const pathDirs = [...(isAbsolute(executable) ? [dirname(executable)] : []), dirname(process.execPath), ...SYSTEM_PATH];
  const base: Record<string, string> = {
    HOME: paths.home,
    TMPDIR: paths.tmp,
    XDG_CONFIG_HOME: paths.xdg.config,
    XDG_CACHE_HOME: paths.xdg.cache,
    XDG_DATA_HOME: paths.xdg.data,
    XDG_STATE_HOME: paths.xdg.state,
    ORKA_WORKSPACE: paths.workspace,
    PWD: cwd,
    PATH: [...new Set(pathDirs)].join(":"),
  };
  for (const [name, value] of Object.entries(adapterEnv)) {
    if (!ENV_NAME.test(name)) throw new OrkaError("invalid_argument", `the session's variable name ${JSON.stringify(name)} is not valid: use letters, digits and '_', not starting with a digit`);
    if (value.includes("\0")) throw new OrkaError("invalid_argument", `the session's variable ${name} contains a NUL character`);
    if (Object.hasOwn(base, name)) throw new OrkaError("invalid_argument", `the session's variable ${name} is set by the launcher and cannot be replaced`);
  }
  return { ...base, ...adapterEnv };
}

async function writeSessionFiles(root: string, files: SessionFile[]): Promise<void> {
  for (const file of files) {
    const path = resolve(file.path);
    if (path === root || !isInside(root, path)) {
      throw new OrkaError("invalid_argument", `the session file ${file.path} is outside the session's private root ${root}`);
    }
    await mkdir(dirname(path), { recursive: true, mode: PRIVATE_DIR_MODE });
    // A checked-out workspace may hold symbolic links: the directory written into must really be inside the root,
    // and "wx" refuses to open through a link at the file itself.
    if (!isInside(await realpath(root), await realpath(dirname(path)))) {
      throw new OrkaError("invalid_argument", `the session file ${file.path} leads outside the session's private root through a symbolic link`);
    }
    await writeFile(path, file.content, { mode: PRIVATE_FILE_MODE, flag: "wx" }).catch((err: NodeJS.ErrnoException) => {
      throw err.code === "EEXIST" ? new OrkaError("invalid_argument", `the session file ${file.path} already exists (a symbolic link, or listed twice by the adapter)`) : err;
    });
  }
}

interface SessionBinds {
  /** The private root, then the workspace (mounted last, so nothing hides it). */
  writable: [string, string];
  readOnly: string[];
}

interface Spawned {
  cwd: string;
  env: Record<string, string>;
  binds: SessionBinds;
  signal: AbortSignal;
  onOutput?: (chunk: string) => void;
}

function spawnSession(command: string[], how: Spawned): Promise<SessionOutcome> {
  const sandbox = spawnSandboxed({
    command,
    workDir: how.binds.writable[1],
    workDirMount: how.binds.writable[1],
    cwd: how.cwd,
    extraBinds: [
      ...how.binds.readOnly.map((path) => ({ host: path, sandbox: path, readOnly: true })),
      { host: how.binds.writable[0], sandbox: how.binds.writable[0] },
    ],
    env: how.env,
    network: true,
    // codex confines the commands it runs with bubblewrap of its own.
    nestedNamespaces: true,
    limits: SESSION_LIMITS,
  });
  // The CLI reads no input: it sees end-of-file, and a pipe it closed early is no failure.
  sandbox.stdin.on("error", () => undefined);
  sandbox.stdin.end();
  const stdout = new BoundedText(SESSION_STDOUT_LIMIT_BYTES);
  const stderr = new TailText(SESSION_STDERR_TAIL_BYTES);
  for (const [stream, sink] of [[sandbox.stdout, stdout], [sandbox.stderr, stderr]] as const) {
    stream.setEncoding("utf8");
    stream.on("data", (chunk: string) => {
      sink.append(chunk);
      how.onOutput?.(chunk);
    });
  }
  let killTimer: NodeJS.Timeout | undefined;
  const terminate = () => {
    // Should /proc not answer, the kill after the grace still ends the sandbox.
    sandbox.signalInside("SIGTERM").catch(() => undefined);
    killTimer = setTimeout(() => sandbox.kill(), SESSION_KILL_GRACE_MS);
  };
  if (how.signal.aborted) terminate();
  else how.signal.addEventListener("abort", terminate, { once: true });
  // Once the CLI has exited its sandbox is gone, and with it whatever it left running (its pid namespace ends with it).
  return sandbox.exited
    .then((exit) => ({ ...commandExit(exit), stdout: stdout.text(), stdoutTruncated: stdout.truncated, stderrTail: stderr.text() }))
    .catch((err: Error) => {
      throw new OrkaError("failed_precondition", `the session's CLI ${command[0]} could not be started: ${err.message}`);
    })
    .finally(() => {
      how.signal.removeEventListener("abort", terminate);
      clearTimeout(killTimer);
    });
}
