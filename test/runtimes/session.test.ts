import { chmodSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, realpathSync, writeFileSync, rmSync, statSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RuntimeAdapter, RuntimeLaunch, SessionFile, SessionPaths, SessionPolicy } from "../../src/runtimes/adapter.ts";
import { startMcpBroker } from "../../src/mcp/broker.ts";
import type { BrokerCall } from "../../src/mcp/calls.ts";
import { prepareSessionPaths, runSession, SESSION_STDOUT_LIMIT_BYTES, type SessionOutcome } from "../../src/runtimes/session.ts";
import { notRunning } from "../helpers/orka-server.ts";

const FAKE_CLI = fileURLToPath(new URL("../fixtures/fake-coding-cli.mjs", import.meta.url));
const MARKER = "ORKA_SESSION_TEST_MARKER";
/** The stand-in CLI imports the MCP SDK from the repository's node_modules, which the sandbox shows it read-only. */
const READ_PATHS = [fileURLToPath(new URL("../../node_modules", import.meta.url))];

const policy: SessionPolicy = { nativeTools: "unrestricted", disallowedTools: [], allowBash: true, maxTurns: 5, brokeredTools: [], intent: "write", model: "test-model" };

/** A claude-like adapter: the prompt as `-p`, one settings file in the private config directory, one variable. */
function testAdapter(extra: { files?: (launch: RuntimeLaunch) => SessionFile[]; env?: Record<string, string> } = {}): RuntimeAdapter {
  return {
    runtime: "claude",
    cli: { packageName: "fake-coding-cli", version: "0.0.0", bin: "fake" },
    wire: "anthropic-messages",
    refusal: () => undefined,
    files: extra.files ?? ((launch) => [{ path: join(launch.paths.xdg.config, "fake", "settings.json"), content: "{}" }]),
    argv: (launch) => ["-p", launch.prompt, "--output-format", "json", "--model", launch.policy.model],
    env: () => extra.env ?? { FAKE_CLI_MODEL: "test-model" },
    finalAnswer: (stdout) => (JSON.parse(stdout) as { result: string }).result,
  };
}

function launchFor(paths: SessionPaths, script: Record<string, unknown>): RuntimeLaunch {
  return { policy, prompt: JSON.stringify(script), paths, mcp: { url: "http://127.0.0.1:1/unused", bearer: "unused" }, provider: { baseURL: "http://127.0.0.1:1", token: "unused" } };
}

interface Answer {
  env?: Record<string, string>;
  read?: Record<string, string | { error: string }>;
  procEnviron?: Record<string, string | { error: string }>;
  uid?: number;
  gid?: number;
  print?: string;
  tools?: string[];
  calls?: { tool: string; result?: unknown; error?: { code: number; message: string } }[];
}

function answerOf(outcome: SessionOutcome): Answer {
  return JSON.parse(testAdapter().finalAnswer(outcome.stdout)) as Answer;
}

/** Waits (bounded) until `process.kill(pid, 0)` fails: init reaps an orphaned zombie within a few seconds. */
async function signalFailsWithin(pid: number, ms: number): Promise<boolean> {
  for (const deadline = Date.now() + ms; Date.now() < deadline; await new Promise((done) => setTimeout(done, 50))) {
    try {
      process.kill(pid, 0);
    } catch {
      return true;
    }
  }
  return false;
}

/**
 * The host pid of the process working in `dir` whose command line holds `text`: inside its sandbox the CLI
 * knows only its own namespace's pids.
 */
function hostPidIn(dir: string, text: string): number | undefined {
  for (const entry of readdirSync("/proc").filter((name) => /^\d+$/.test(name))) {
    try {
      const [argv0, ...args] = readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0");
      // bubblewrap's own init inside the sandbox works there too, with the CLI's command line among its arguments.
      if (readlinkSync(`/proc/${entry}/cwd`) === dir && !argv0?.endsWith("bwrap") && args.some((arg) => arg.includes(text))) return Number(entry);
    } catch {
      // gone, or not ours to read
    }
  }
  return undefined;
}

async function hostPidWithin(dir: string, text: string): Promise<number> {
  await until(() => hostPidIn(dir, text) !== undefined, 10_000);
  return hostPidIn(dir, text)!;
}

/** The host pids of the stand-in CLI working in `dir` and of the grandchild it started. */
async function sandboxedPids(dir: string): Promise<{ cli: number; child: number }> {
  return { cli: await hostPidWithin(dir, FAKE_CLI), child: await hostPidWithin(dir, "setInterval") };
}

async function until(condition: () => boolean, ms: number): Promise<void> {
  for (const deadline = Date.now() + ms; !condition(); await new Promise((done) => setTimeout(done, 20))) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
  }
}

let base: string;
beforeAll(() => {
  base = realpathSync(mkdtempSync(join(tmpdir(), "orka-sessions-")));
  // The sandbox user (when the tests run as root) reaches the sessions below it, as it reaches an attempt's tmp directory.
  chmodSync(base, 0o711);
  process.env[MARKER] = "must-not-reach-the-cli";
});
afterAll(() => {
  delete process.env[MARKER];
  rmSync(base, { recursive: true, force: true });
});

describe("a session's private root", () => {
  it("is a fresh directory named after the session with home, tmp, workspace and XDG directories, all mode 0700", async () => {
    const paths = await prepareSessionPaths(base, "task-1.attempt_2");
    expect(paths.root.startsWith(join(base, "task-1.attempt_2-"))).toBe(true);
    const dirs = [paths.root, paths.home, paths.tmp, paths.workspace, ...Object.values(paths.xdg), join(paths.root, "xdg")];
    for (const dir of dirs) expect(statSync(dir).mode & 0o777, dir).toBe(0o700);
    const again = await prepareSessionPaths(base, "task-1.attempt_2");
    expect(again.root).not.toBe(paths.root);
  });

  it.each(["", "../escape", ".hidden", "-dash", "a/b", "a b", "x".repeat(129)])("refuses the session id %j", async (id) => {
    await expect(prepareSessionPaths(base, id)).rejects.toThrow(/session id .* is not valid/);
  });

  it("refuses a relative base, a missing one and one that is a symbolic link", async () => {
    const link = join(base, "link");
    mkdirSync(join(base, "real"));
    symlinkSync(join(base, "real"), link);
    await expect(prepareSessionPaths("relative/dir", "s")).rejects.toThrow(/absolute/);
    await expect(prepareSessionPaths(join(base, "missing"), "s")).rejects.toThrow(/existing directory/);
    await expect(prepareSessionPaths(link, "s")).rejects.toThrow(/symbolic link/);
  });
});

describe("running a session's CLI", () => {
  it("gives the CLI an environment built from nothing: its private directories, a PATH with Node, the adapter's variables", async () => {
    const paths = await prepareSessionPaths(base, "env");
    const outcome = await runSession({ command: ["node", FAKE_CLI], readPaths: READ_PATHS, adapter: testAdapter(), launch: launchFor(paths, { env: true, print: "hello" }), cwd: paths.workspace, signal: AbortSignal.timeout(20_000) });
    expect(outcome.exitCode).toBe(0);
    const env = answerOf(outcome).env ?? {};
    expect(env[MARKER]).toBeUndefined();
    expect(Object.keys(env).sort()).toEqual(
      ["FAKE_CLI_MODEL", "HOME", "ORKA_WORKSPACE", "PATH", "PWD", "TMPDIR", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME"].sort(),
    );
    expect(env).toMatchObject({ HOME: paths.home, TMPDIR: paths.tmp, ORKA_WORKSPACE: paths.workspace, PWD: paths.workspace, XDG_CONFIG_HOME: paths.xdg.config, FAKE_CLI_MODEL: "test-model" });
    expect(env.PATH?.split(":")).toEqual(expect.arrayContaining(["/usr/local/bin", "/usr/bin", "/bin"]));
    expect(answerOf(outcome).print).toBe("hello");
  });

  it("writes the adapter's files mode 0600 in directories mode 0700 before the CLI starts", async () => {
    const paths = await prepareSessionPaths(base, "files");
    const settings = join(paths.xdg.config, "fake", "settings.json");
    await runSession({ command: ["node", FAKE_CLI], readPaths: READ_PATHS, adapter: testAdapter(), launch: launchFor(paths, {}), cwd: paths.workspace, signal: AbortSignal.timeout(20_000) });
    expect(lstatSync(settings).mode & 0o777).toBe(0o600);
    expect(statSync(join(paths.xdg.config, "fake")).mode & 0o777).toBe(0o700);
  });

  it("refuses a file outside the private root, and starts nothing", async () => {
    const paths = await prepareSessionPaths(base, "escape");
    const outside = join(base, "escaped.json");
    const adapter = testAdapter({ files: (launch) => [{ path: join(launch.paths.root, "..", "escaped.json"), content: "{}" }] });
    const output: string[] = [];
    await expect(runSession({ command: ["node", FAKE_CLI], readPaths: READ_PATHS, adapter, launch: launchFor(paths, {}), cwd: paths.workspace, onOutput: (chunk) => output.push(chunk), signal: AbortSignal.timeout(20_000) })).rejects.toThrow(/outside the session's private root/);
    expect(() => statSync(outside)).toThrow();
    expect(output).toEqual([]);
  });

  it("refuses a file whose directory is a symbolic link out of the root, or which is itself one", async () => {
    const paths = await prepareSessionPaths(base, "linked");
    const outsideDir = join(base, "linked-outside");
    mkdirSync(outsideDir);
    symlinkSync(outsideDir, join(paths.workspace, ".claude"));
    symlinkSync(join(outsideDir, "target.json"), join(paths.home, "settings.json"));
    for (const path of [join(paths.workspace, ".claude", "settings.json"), join(paths.home, "settings.json")]) {
      const adapter = testAdapter({ files: () => [{ path, content: "{}" }] });
      await expect(runSession({ command: ["node", FAKE_CLI], readPaths: READ_PATHS, adapter, launch: launchFor(paths, {}), cwd: paths.workspace, signal: AbortSignal.timeout(20_000) })).rejects.toThrow(/symbolic link/);
    }
    expect(readdirSync(outsideDir)).toEqual([]);
  });

  it.each([
    [{ "BAD-NAME": "x" }, /variable name "BAD-NAME" is not valid/],
    [{ GOOD: "a\0b" }, /contains a NUL character/],
    [{ HOME: "/root" }, /HOME is set by the launcher/],
  ])("refuses the adapter variables %j", async (env, message) => {
    const paths = await prepareSessionPaths(base, "badenv");
    await expect(runSession({ command: ["node", FAKE_CLI], readPaths: READ_PATHS, adapter: testAdapter({ env }), launch: launchFor(paths, {}), cwd: paths.workspace, signal: AbortSignal.timeout(20_000) })).rejects.toThrow(message);
  });

  it("refuses a working directory outside the workspace", async () => {
    const paths = await prepareSessionPaths(base, "cwd");
    await expect(runSession({ command: ["node", FAKE_CLI], readPaths: READ_PATHS, adapter: testAdapter(), launch: launchFor(paths, {}), cwd: paths.home, signal: AbortSignal.timeout(20_000) })).rejects.toThrow(/inside its workspace/);
  });

  it("on abort ends the CLI and its setsid grandchild (SIGTERM in the sandbox), and resolves only after the CLI exited", async () => {
    const paths = await prepareSessionPaths(base, "abort");
    const controller = new AbortController();
    let output = "";
    const running = runSession({ command: ["node", FAKE_CLI], readPaths: READ_PATHS, adapter: testAdapter(), launch: launchFor(paths, { spawnChild: "setsid", sleep: 60 }), cwd: paths.workspace, onOutput: (chunk) => (output += chunk), signal: controller.signal });
    await until(() => output.includes("fake-cli child pid"), 10_000);
    const { cli, child } = await sandboxedPids(paths.workspace);
    expect(notRunning(child)).toBe(false);
    controller.abort();
    const outcome = await running;
    expect(outcome.signal).toBe("SIGTERM");
    expect(notRunning(cli)).toBe(true);
    expect(await signalFailsWithin(child, 8_000)).toBe(true);
  });

  it("kills the sandbox when the CLI ignores SIGTERM for the grace period", async () => {
    const paths = await prepareSessionPaths(base, "stubborn");
    const controller = new AbortController();
    let output = "";
    const running = runSession({ command: ["node", FAKE_CLI], readPaths: READ_PATHS, adapter: testAdapter(), launch: launchFor(paths, { ignoreSigterm: true, sleep: 60 }), cwd: paths.workspace, onOutput: (chunk) => (output += chunk), signal: controller.signal });
    await until(() => output.includes("fake-cli pid"), 10_000);
    const cli = await hostPidWithin(paths.workspace, FAKE_CLI);
    controller.abort();
    const outcome = await running;
    expect(output).toContain("fake-cli ignores SIGTERM");
    expect(outcome.signal).toBe("SIGKILL");
    expect(await signalFailsWithin(cli, 8_000)).toBe(true);
  });

  it("kills what the CLI left running, a setsid grandchild too, once it exits", async () => {
    const paths = await prepareSessionPaths(base, "stray");
    const running = runSession({ command: ["node", FAKE_CLI], readPaths: READ_PATHS, adapter: testAdapter(), launch: launchFor(paths, { spawnChild: "setsid", sleep: 2 }), cwd: paths.workspace, signal: AbortSignal.timeout(20_000) });
    const { child } = await sandboxedPids(paths.workspace);
    expect((await running).exitCode).toBe(0);
    expect(await signalFailsWithin(child, 8_000)).toBe(true);
  });

  it("keeps at most 4 MiB of stdout and says it cut the rest; keeps the tail of stderr", async () => {
    const paths = await prepareSessionPaths(base, "flood");
    const outcome = await runSession({ command: ["node", FAKE_CLI], readPaths: READ_PATHS, adapter: testAdapter(), launch: launchFor(paths, { flood: SESSION_STDOUT_LIMIT_BYTES + 4096, exitCode: 3 }), cwd: paths.workspace, signal: AbortSignal.timeout(20_000) });
    expect(outcome.exitCode).toBe(3);
    expect(outcome.stdoutTruncated).toBe(true);
    expect(outcome.stdout).toMatch(/\[truncated after 4194304 bytes; \d+ bytes omitted\]$/);
    expect(Buffer.byteLength(outcome.stdout)).toBeLessThan(SESSION_STDOUT_LIMIT_BYTES + 100);
    expect(outcome.stderrTail).toMatch(/fake-cli pid \d+/);
  });

  it("rejects when the command cannot be started", async () => {
    const paths = await prepareSessionPaths(base, "missing");
    await expect(runSession({ command: [join(base, "no-such-cli")], adapter: testAdapter(), launch: launchFor(paths, {}), cwd: paths.workspace, signal: AbortSignal.timeout(20_000) })).rejects.toThrow(/could not be started/);
  });
});

describe("the session's sandbox", () => {
  it("shows the CLI none of the host's files but its binds: a file beside its private root cannot be read", async () => {
    const paths = await prepareSessionPaths(base, "binds");
    const beside = join(base, "beside-the-session.txt");
    writeFileSync(beside, "not for the CLI");
    chmodSync(beside, 0o644);
    const own = join(paths.workspace, "own.txt");
    writeFileSync(own, "the workspace's own");
    const outcome = await runSession({ command: ["node", FAKE_CLI], readPaths: READ_PATHS, adapter: testAdapter(), launch: launchFor(paths, { readFiles: [beside, own, "/etc/hostname"], writeFile: "made-inside.txt" }), cwd: paths.workspace, signal: AbortSignal.timeout(20_000) });
    expect(outcome.exitCode).toBe(0);
    const read = answerOf(outcome).read ?? {};
    expect(read[beside]).toEqual({ error: "ENOENT" });
    expect(read[own]).toBe("the workspace's own");
    expect(readFileSync(join(paths.workspace, "made-inside.txt"), "utf8")).toContain("written by the fake coding CLI");
  });

  it("binds the files a replacement command names, never their directories", async () => {
    const toolDir = mkdtempSync(join(base, "operator-tools-"));
    chmodSync(toolDir, 0o755);
    const script = join(toolDir, "cli.mjs");
    const beside = join(toolDir, "operator-secret.txt");
    writeFileSync(beside, "beside the operator's script");
    // Reads the file its prompt names and answers what it got, in claude's result format.
    writeFileSync(script, `import { readFileSync } from "node:fs";
const wanted = process.argv[process.argv.indexOf("-p") + 1];
let text; try { text = readFileSync(wanted, "utf8"); } catch (error) { text = error.code; }
console.log(JSON.stringify({ type: "result", subtype: "success", is_error: false, result: text }));
`);
    chmodSync(script, 0o644);
    chmodSync(beside, 0o644);
    const run = async (prompt: string) => {
      const paths = await prepareSessionPaths(base, "command-dir");
      return runSession({ command: ["node", script], adapter: testAdapter(), launch: { ...launchFor(paths, {}), prompt }, cwd: paths.workspace, signal: AbortSignal.timeout(20_000) });
    };
    expect(testAdapter().finalAnswer((await run(script)).stdout)).toContain("readFileSync");
    expect(testAdapter().finalAnswer((await run(beside)).stdout)).toBe("ENOENT");
  });

  it("hides the worker's processes: no environment the CLI can read through /proc holds the worker's variables", async () => {
    const paths = await prepareSessionPaths(base, "proc");
    const outcome = await runSession({ command: ["node", FAKE_CLI], readPaths: READ_PATHS, adapter: testAdapter(), launch: launchFor(paths, { procEnviron: true }), cwd: paths.workspace, signal: AbortSignal.timeout(20_000) });
    expect(outcome.exitCode).toBe(0);
    const environs = Object.values(answerOf(outcome).procEnviron ?? {});
    const readable = environs.filter((text): text is string => typeof text === "string");
    // It did read /proc: its own environment is there, and nothing of the test process's.
    expect(readable.some((text) => text.includes("FAKE_CLI_MODEL=test-model"))).toBe(true);
    expect(readable.some((text) => text.includes(MARKER))).toBe(false);
    expect(environs.length).toBeLessThan(5);
  });

  it.runIf(process.getuid?.() === 0)("runs the CLI as nobody (uid and gid 65534) when Orka runs as root, with its private root its own", async () => {
    const paths = await prepareSessionPaths(base, "nobody");
    const outcome = await runSession({ command: ["node", FAKE_CLI], readPaths: READ_PATHS, adapter: testAdapter(), launch: launchFor(paths, { identity: true, writeFile: "by-nobody.txt" }), cwd: paths.workspace, signal: AbortSignal.timeout(20_000) });
    expect(outcome.exitCode).toBe(0);
    expect(answerOf(outcome)).toMatchObject({ uid: 65534, gid: 65534 });
    expect(statSync(join(paths.workspace, "by-nobody.txt")).uid).toBe(65534);
    expect(statSync(join(paths.xdg.config, "fake", "settings.json")).uid).toBe(65534);
  });
});

describe("the scripted stand-in CLI through a real broker", () => {
  it("reads its MCP configuration, lists the session's tools, calls them and answers what it saw", async () => {
    const broker = await startMcpBroker();
    try {
      const seen: BrokerCall[] = [];
      const tools = [{ name: "web_fetch", description: "Fetch a page.", inputSchema: { type: "object", properties: { url: { type: "string" } } }, effect: "read_only" as const }];
      const route = broker.open({ tools, run: async (call) => (seen.push(call), { text: '{"title":"fixture"}', isError: false }) });
      const paths = await prepareSessionPaths(base, "brokered");
      const mcpConfig = join(paths.xdg.config, "claude", "mcp.json");
      const adapter: RuntimeAdapter = {
        ...testAdapter(),
        files: (launch) => [{ path: mcpConfig, content: JSON.stringify({ mcpServers: { orka: { type: "http", url: launch.mcp.url, headers: { Authorization: `Bearer ${launch.mcp.bearer}` } } } }) }],
        argv: (launch) => ["-p", launch.prompt, "--output-format", "json", "--mcp-config", mcpConfig, "--strict-mcp-config", "--allowedTools", "mcp__orka__web_fetch"],
      };
      const script = { calls: [{ tool: "web_fetch", arguments: { url: "http://fixture.test/" } }, { tool: "code_exec", arguments: {} }], print: "done" };
      const launch = { ...launchFor(paths, script), mcp: { url: route.url, bearer: route.bearer } };
      const outcome = await runSession({ command: ["node", FAKE_CLI], readPaths: READ_PATHS, adapter, launch, cwd: paths.workspace, signal: AbortSignal.timeout(20_000) });
      expect(outcome.exitCode).toBe(0);
      const answer = answerOf(outcome);
      expect(answer.tools).toEqual(["web_fetch"]);
      expect(answer.calls?.[0]).toMatchObject({ tool: "web_fetch", result: { content: [{ type: "text", text: '{"title":"fixture"}' }], isError: false, structuredContent: { title: "fixture" } } });
      expect(answer.calls?.[1]).toMatchObject({ tool: "code_exec", error: { code: -32001 } });
      expect(seen.map((call) => call.name)).toEqual(["web_fetch"]);
      expect(answer.print).toBe("done");
    } finally {
      await broker.close();
    }
  });
});
