// Coding-agent Tasks on the real coding CLIs, end to end through a real Orka server: the CLI is the
// pinned one from the npm registry (installed once per machine into .cache/coding-clis), its model is
// the LLM peer behind the session's provider proxy, its workspace a checkout from the git peer, and
// Orka's tools reach it through the session's broker.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startGitPeer, type GitPeer } from "../peers/git-server.ts";
import { toolResultsOf, type PeerTurn } from "../peers/llm-server.ts";
import { startOrkaWithPeer } from "../helpers/orka-with-peer.ts";
import type { OrkaUnderTest } from "../helpers/orka-server.ts";
import type { LlmPeer } from "../peers/llm-server.ts";
import { CODING_CLI_CACHE, installedCli } from "../helpers/coding-clis.ts";
import { peerProviderYaml } from "../helpers/coding-agents.ts";

const PROVIDER_KEY = "sk-provider-key-of-the-real-cli-tasks-0123";
const GIT_TOKEN = "ghp_readerTOKEN0000000000000000000000042";
const NOTES = "the launch code is 4711-kestrel";

/**
 * Per CLI: its Agent's model (on the Provider of the wire it speaks) and tools, how the model reads
 * notes.txt with the CLI's own tool, and how the CLI names the broker's web_fetch.
 */
const runtimes = {
  claude: { model: "claude-sonnet-4-5", provider: "anthropic-peer", tools: "Read, web_fetch", read: (workspace: string) => ({ name: "Read", arguments: { file_path: `${workspace}/notes.txt` } }), fetch: "mcp__orka__web_fetch" },
  // Codex on a read-only workspace takes exactly Glob, Grep and Read.
  codex: { model: "gpt-5-codex", provider: "openai-peer", tools: "Glob, Grep, Read, web_fetch", read: () => ({ name: "exec_command", arguments: { cmd: "cat notes.txt" } }), fetch: "mcp__orka__web_fetch" },
  // Copilot cannot turn its web search off, so its list must allow it.
  copilot: { model: "gpt-4o-mini", provider: "openai-peer", tools: "Read, WebSearch, web_fetch", read: (workspace: string) => ({ name: "view", arguments: { path: `${workspace}/notes.txt` } }), fetch: "orka-web_fetch" },
  // OpenCode must be told the model's limits.
  opencode: { model: "gpt-4.1-mini", limits: ", contextWindow: 128000, maxTokens: 8192", provider: "openai-peer", tools: "Read, web_fetch", read: (workspace: string) => ({ name: "read", arguments: { filePath: `${workspace}/notes.txt` } }), fetch: "orka_web_fetch" },
} as const;
const RUNTIMES = Object.keys(runtimes) as (keyof typeof runtimes)[];

describe("coding-agent Tasks on the real CLIs", () => {
  let orka: OrkaUnderTest;
  let peer: LlmPeer;
  let git: GitPeer;
  let stop: () => Promise<void>;
  let page: http.Server;
  let pageURL = "";
  const workDir = mkdtempSync(join(tmpdir(), "orka-real-cli-tasks-"));

  beforeAll(async () => {
    // Installed before the server starts, so a Task's first start does not wait on npm.
    await Promise.all(RUNTIMES.map(installedCli));
    page = http.createServer((_request, response) => response.end("the page says: kestrels hover"));
    await new Promise<void>((resolve) => page.listen(0, "127.0.0.1", resolve));
    pageURL = `http://127.0.0.1:${(page.address() as AddressInfo).port}/kestrel`;
    git = await startGitPeer();
    await git.createRepo("o/app", { files: { "notes.txt": `${NOTES}\n` }, branch: "main" });
    git.addToken(GIT_TOKEN, "reader", { "o/app": "read" });
    ({ orka, peer, stop } = await startOrkaWithPeer(
      `${peerProviderYaml("anthropic-peer", "anthropic", PROVIDER_KEY)}---
${peerProviderYaml("openai-peer", "openai", PROVIDER_KEY)}---
apiVersion: v1
kind: Secret
metadata: {name: git-read}
stringData: {token: ${GIT_TOKEN}}
${RUNTIMES.map((runtime) => `---
apiVersion: core.orka.ai/v1alpha1
kind: Agent
metadata: {name: ${runtime}-coder}
spec:
  model: {provider: ${runtimes[runtime].provider}, name: ${runtimes[runtime].model}${"limits" in runtimes[runtime] ? runtimes[runtime].limits : ""}}
  runtime: {type: ${runtime}, defaultAllowedTools: [${runtimes[runtime].tools}]}
`).join("")}`,
      { ORKA_WORK_DIR: workDir, ORKA_RUNTIME_CACHE: CODING_CLI_CACHE, ORKA_GIT_CONFIG: git.clientConfigFile, ORKA_ALLOW_LOOPBACK_EGRESS: "true" },
    ));
  }, 300_000);
  afterAll(async () => {
    await stop?.();
    await git?.close();
    await new Promise((resolve) => page?.close(resolve));
    rmSync(workDir, { recursive: true, force: true });
  });

  it.each(RUNTIMES)("%s reads a file with its own tool, fetches a page through Orka's broker, and its answer is the Task's result", async (runtime) => {
    const { model, read, fetch } = runtimes[runtime];
    const workspaceOf = (request: Record<string, unknown>) => JSON.stringify(request).match(new RegExp(`${workDir}/[A-Za-z0-9._-]+/workspace`))?.[0] ?? "";
    const turns: ((request: Record<string, unknown>) => PeerTurn)[] = [
      (request) => ({ toolCalls: [read(workspaceOf(request))] }),
      () => ({ toolCalls: [{ name: fetch, arguments: { url: pageURL } }] }),
      (request) => {
        const results = toolResultsOf(request).join("\n");
        return { text: `notes: ${results.includes(NOTES) ? "seen" : "missing"}; page: ${results.includes("kestrels hover") ? "seen" : "missing"}` };
      },
    ];
    peer.script(model, turns);
    const name = `${runtime}-reads-and-fetches`;
    const created = await orka.api("POST", "/api/v1/tasks", {
      metadata: { name },
      spec: { type: "agent", agentRef: { name: `${runtime}-coder` }, prompt: "Read notes.txt, fetch the page, say what you saw.", workspace: { intent: "read", gitRepo: "https://github.com/o/app", readCredentialRef: "git-read" } },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const task = await orka.waitFor(name, ["Succeeded", "Failed"], 180_000);
    const logs: string = (await orka.api("GET", `/api/v1/tasks/${name}/logs`)).body.logs;
    expect(task.status.phase, `${task.status.message}\n${logs.slice(-3000)}`).toBe("Succeeded");
    // A Task with a repository answers with Orka's envelope: the CLI's answer is its summary.
    const envelope = JSON.parse((await orka.api("GET", `/api/v1/tasks/${name}/result`)).body.result);
    expect(envelope).toMatchObject({ version: 1, summary: "notes: seen; page: seen", files: [] });
    expect(task.status.delivery).toMatchObject({ outcome: "ReadValidated" });
    const modelCalls = peer.requests.filter((request) => request.body.model === model);
    expect(modelCalls.length).toBeGreaterThanOrEqual(3);
    // The Provider got its key from the proxy; nothing the CLI printed held it.
    expect(modelCalls.every((r) => r.headers["x-api-key"] === PROVIDER_KEY || r.headers.authorization === `Bearer ${PROVIDER_KEY}`)).toBe(true);
    expect(logs).not.toContain(PROVIDER_KEY);
  }, 240_000);
});
