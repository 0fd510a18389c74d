// Installs the four real coding CLIs (claude, codex, copilot, opencode) at their pinned versions from the npm
// registry into .cache/coding-clis (once per machine: about 1.3 GiB, 20-30 s all together), then launches
// each as Orka launches it, against local servers only.
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import type { RuntimeType } from "../../src/resources/agent.ts";
import type { RuntimeLaunch, SessionPaths, SessionPolicy } from "../../src/runtimes/adapter.ts";
import { startProviderProxy } from "../../src/runtimes/provider-proxy.ts";
import { runtimeAdapter } from "../../src/runtimes/registry.ts";
import { startLlmPeer, toolResultsOf, type PeerTurn } from "../peers/llm-server.ts";
import { installedCli, pinnedName, startCountingMcpServer } from "../helpers/coding-clis.ts";

const PROVIDER_KEY = "sk-provider-real-key-0123456789abcdef";
const NOTES = "the launch code is 4711-kestrel";
const RUN_LIMIT_MS = 60_000;

const RUNTIMES = ["claude", "codex", "copilot", "opencode"] as const;

beforeAll(async () => {
  await Promise.all(RUNTIMES.map(installedCli));
}, 600_000);

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** The model's way to read `notes.txt` with the CLI's own tool. */
const readNotes: Partial<Record<RuntimeType, PeerTurn["toolCalls"]>> = {
  claude: [{ name: "Read", arguments: { file_path: "NOTES_PATH" } }],
  codex: [{ name: "exec_command", arguments: { cmd: "cat notes.txt" } }],
  copilot: [{ name: "view", arguments: { path: "NOTES_PATH" } }],
  opencode: [{ name: "read", arguments: { filePath: "NOTES_PATH" } }],
};

/** How each CLI names the broker's `web_search`. */
const mcpToolName: Record<RuntimeType, string> = { claude: "mcp__orka__web_search", codex: "mcp__orka__web_search", copilot: "orka-web_search", opencode: "orka_web_search" };

const models: Record<RuntimeType, { model: string; providerType: "anthropic" | "openai"; nativeTools: string[] }> = {
  claude: { model: "claude-sonnet-4-5", providerType: "anthropic", nativeTools: ["Read"] },
  codex: { model: "gpt-5-codex", providerType: "openai", nativeTools: ["Glob", "Grep", "Read"] },
  // Copilot cannot turn its web search off, so a restricted policy must allow it (offline, it has none anyway).
  copilot: { model: "gpt-4o-mini", providerType: "openai", nativeTools: ["Glob", "Grep", "Read", "WebSearch"] },
  opencode: { model: "gpt-4o-mini", providerType: "openai", nativeTools: ["Glob", "Read"] },
};

/** How the model asks each CLI to write a file with a shell command, which a read-only policy without Bash must stop. */
const shellWrite: Record<RuntimeType, (file: string) => NonNullable<PeerTurn["toolCalls"]>> = {
  claude: (file) => [{ name: "Bash", arguments: { command: `echo pwned > ${file}`, description: "write" } }],
  codex: (file) => [{ name: "exec_command", arguments: { cmd: `echo pwned > ${file}` } }],
  copilot: (file) => [{ name: "bash", arguments: { command: `echo pwned > ${file}`, description: "write" } }],
  opencode: (file) => [{ name: "bash", arguments: { command: `echo pwned > ${file}`, description: "write" } }],
};

/** A session as Orka launches one: the adapter's files, argv and env, its model behind the proxy in front of the LLM peer, the MCP server. */
async function startSession(runtime: RuntimeType, policyChanges: Partial<SessionPolicy> = {}) {
  const executable = await installedCli(runtime);
  const { model, providerType, nativeTools } = models[runtime];
  const adapter = runtimeAdapter(runtime);
  const peer = await startLlmPeer();
  cleanups.push(() => peer.close());
  const mcp = await startCountingMcpServer((query) => `search results for ${query}`);
  cleanups.push(() => mcp.close());
  const proxy = await startProviderProxy({
    endpoint: { name: "upstream", type: providerType, model, baseURL: providerType === "openai" ? `${peer.url}/v1` : peer.url, apiKey: PROVIDER_KEY },
    wire: adapter.wire,
  });
  cleanups.push(() => proxy.close());
  const paths = await sessionPaths();
  const notesPath = join(paths.workspace, "notes.txt");
  await writeFile(notesPath, `${NOTES}\n`);
  const policy: SessionPolicy = {
    nativeTools,
    disallowedTools: [],
    allowBash: false,
    maxTurns: 10,
    brokeredTools: ["web_search"],
    intent: "read",
    model,
    modelLimits: { contextWindow: 128_000, maxTokens: 4_096 },
    ...policyChanges,
  };
  const launch: RuntimeLaunch = { policy, prompt: "Read notes.txt, search for it, and tell me what you found.", paths, mcp: { url: mcp.url, bearer: mcp.bearer }, provider: proxy };
  expect(adapter.refusal(policy)).toBeUndefined();
  const env = { HOME: paths.home, TMPDIR: paths.tmp, XDG_CONFIG_HOME: paths.xdg.config, XDG_CACHE_HOME: paths.xdg.cache, XDG_DATA_HOME: paths.xdg.data, XDG_STATE_HOME: paths.xdg.state, PATH: "/usr/local/bin:/usr/bin:/bin", ...adapter.env(launch) };
  for (const file of adapter.files(launch)) {
    await mkdir(dirname(file.path), { recursive: true, mode: 0o700 });
    await writeFile(file.path, file.content, { mode: 0o600 });
  }
  return { adapter, model, peer, mcp, paths, notesPath, env, run: () => runCli([executable, ...adapter.argv(launch)], env, paths.workspace) };
}

describe.each(RUNTIMES)("the real %s CLI against local servers", (runtime) => {
  it(`${pinnedName(runtime)} reads a file with its own tool, calls the MCP tool once and answers, never seeing the Provider key`, async () => {
    const session = await startSession(runtime);
    const { adapter, model, peer, mcp, paths } = session;
    const read = readNotes[runtime]!.map((call) => ({ ...call, arguments: JSON.parse(JSON.stringify(call.arguments).replace("NOTES_PATH", session.notesPath)) }));
    peer.script(model, [
      { toolCalls: read },
      { toolCalls: [{ name: mcpToolName[runtime], arguments: { query: "kestrel" } }] },
      (request) => ({ text: `Answer: ${toolResultsOf(request).some((r) => r.includes(NOTES)) ? "saw the notes" : "no notes"} and ${toolResultsOf(request).some((r) => r.includes("search results for kestrel")) ? "saw the search" : "no search"}` }),
    ]);

    const run = await session.run();

    expect(run.exitCode, run.stderr).toBe(0);
    expect(adapter.finalAnswer(run.stdout)).toBe("Answer: saw the notes and saw the search");
    const modelCalls = peer.requests.filter((r) => r.body.model === model);
    // The request after the read carries the file's content (opencode also asks for a title first).
    expect(modelCalls.find((r) => toolResultsOf(r.body).length === 1)?.body).toSatisfy((body: Record<string, unknown>) => toolResultsOf(body)[0].includes(NOTES));
    expect(mcp.calls).toEqual(["kestrel"]);
    // The Provider got its key from the proxy; the CLI never had it: not in its env, files, output or anything it wrote.
    expect(modelCalls.every((r) => r.headers["x-api-key"] === PROVIDER_KEY || r.headers.authorization === `Bearer ${PROVIDER_KEY}`)).toBe(true);
    expect(JSON.stringify(session.env)).not.toContain(PROVIDER_KEY);
    expect(run.stdout + run.stderr).not.toContain(PROVIDER_KEY);
    expect(await filesContaining(paths.root, PROVIDER_KEY)).toEqual([]);
  }, 60_000);

  it("does not run a shell command a read-only policy without Bash leaves out, and still answers", async () => {
    const session = await startSession(runtime);
    const target = join(session.paths.workspace, "pwned.txt");
    session.peer.script(session.model, [{ toolCalls: shellWrite[runtime](target) }, { text: "gave up" }]);

    const run = await session.run();

    expect(run.exitCode, run.stderr).toBe(0);
    expect(session.adapter.finalAnswer(run.stdout)).toBe("gave up");
    expect(existsSync(target)).toBe(false);
  }, 60_000);
});

describe("the real claude CLI with a scoped Bash", () => {
  it("runs the commands the scope allows and refuses the others", async () => {
    const session = await startSession("claude", { nativeTools: ["Bash(echo hello:*)", "Read"], allowBash: true, intent: "write" });
    const target = join(session.paths.workspace, "touched.txt");
    session.peer.script(session.model, [
      { toolCalls: [{ name: "Bash", arguments: { command: "echo hello scoped", description: "greet" } }] },
      { toolCalls: [{ name: "Bash", arguments: { command: `touch ${target}`, description: "touch" } }] },
      (request) => ({ text: toolResultsOf(request).join(" | ") }),
    ]);

    const run = await session.run();

    expect(run.exitCode, run.stderr).toBe(0);
    const [allowed, refused] = session.adapter.finalAnswer(run.stdout).split(" | ");
    expect(allowed).toContain("hello scoped");
    expect(refused).toContain("Permission to use Bash has been denied");
    expect(existsSync(target)).toBe(false);
  }, 60_000);
});

async function sessionPaths(): Promise<SessionPaths> {
  const root = await mkdtemp(join(tmpdir(), "orka-real-cli-"));
  cleanups.push(() => rm(root, { recursive: true, force: true }));
  const xdg = { config: join(root, "xdg", "config"), cache: join(root, "xdg", "cache"), data: join(root, "xdg", "data"), state: join(root, "xdg", "state") };
  const paths = { root, home: join(root, "home"), tmp: join(root, "tmp"), workspace: join(root, "workspace"), xdg };
  for (const dir of [paths.home, paths.tmp, paths.workspace, ...Object.values(xdg)]) await mkdir(dir, { recursive: true, mode: 0o700 });
  return paths;
}

/** Runs the CLI in its own process group, killed as a group when done or after the run limit. */
async function runCli(command: string[], env: Record<string, string>, cwd: string): Promise<{ exitCode: number | null; stdout: string; stderr: string }> {
  const child = spawn(command[0], command.slice(1), { env, cwd, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk) => (stdout = (stdout + chunk).slice(-1_000_000)));
  child.stderr.on("data", (chunk) => (stderr = (stderr + chunk).slice(-100_000)));
  const killGroup = () => {
    try {
      process.kill(-child.pid!, "SIGKILL");
    } catch {
      // The group is gone already.
    }
  };
  const timer = setTimeout(killGroup, RUN_LIMIT_MS);
  const exitCode = await new Promise<number | null>((resolve) => child.once("close", resolve));
  clearTimeout(timer);
  killGroup();
  return { exitCode, stdout, stderr };
}

/** Files under `dir` whose bytes contain `needle` (bounded: the first 4 MiB of at most 10,000 files). */
async function filesContaining(dir: string, needle: string): Promise<string[]> {
  const entries = (await readdir(dir, { recursive: true, withFileTypes: true })).filter((e) => e.isFile()).slice(0, 10_000);
  const hits: string[] = [];
  for (const entry of entries) {
    const path = join(entry.parentPath, entry.name);
    const bytes = await readFile(path).catch(() => Buffer.alloc(0));
    if (bytes.subarray(0, 4 * 1024 * 1024).includes(needle)) hits.push(path);
  }
  return hits;
}
