import { existsSync, readdirSync, readFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startGitPeer, type GitPeer } from "../peers/git-server.ts";
import { toolResultsOf, type LlmPeer } from "../peers/llm-server.ts";
import { startOrkaWithPeer } from "../helpers/orka-with-peer.ts";
import { peerProviderYaml, STAND_IN_CLAUDE_ENV, STAND_IN_CLI } from "../helpers/coding-agents.ts";
import { notRunning, type OrkaUnderTest } from "../helpers/orka-server.ts";

/** The stand-in CLI imports the MCP SDK from here: its sandbox shows it read-only. */
const PROVIDER_KEY = "sk-ant-peer-key-that-must-stay-out-of-the-cli";
const REPO = "https://github.com/o/app";
const GIT_TOKEN = "ghp_readerTOKEN0000000000000000000000009";

/** Host pids of the stand-in CLI whose arguments hold `marker` (not bubblewrap's, which holds them too) and of its children. */
function cliAndChild(marker: string): number[] {
  const processes = readdirSync("/proc").filter((name) => /^\d+$/.test(name)).flatMap((pid) => {
    try {
      const argv = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
      const parent = Number(/^PPid:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]);
      return [{ pid: Number(pid), parent, argv }];
    } catch {
      return [];
    }
  });
  const cli = processes.find((p) => p.argv[1] === STAND_IN_CLI && p.argv.some((arg) => arg.includes(marker)))?.pid;
  return cli === undefined ? [] : [cli, ...processes.filter((p) => p.parent === cli).map((p) => p.pid)];
}

// A coding-agent Task end to end through a real server: the claude runtime's command is replaced by the
// scripted stand-in CLI (a real MCP client), which reaches Orka's tools through the session's broker.
describe("coding-agent sessions through a real server", () => {
  let orka: OrkaUnderTest;
  let stop: () => Promise<void>;
  let peer: LlmPeer;
  let fixture: http.Server;
  let fixtureURL: string;
  let git: GitPeer;
  let ticketTool = "";
  /** Requests the fixture received, by path, with the Idempotency-Key each carried. */
  const hits: { method: string; path: string; key?: string }[] = [];
  /** Calls of the fixture's tools (availability probes do not POST). */
  const hitsOn = (path: string) => hits.filter((hit) => hit.path === path && hit.method === "POST");

  beforeAll(async () => {
    fixture = http.createServer((request, response) => {
      hits.push({ method: request.method ?? "", path: request.url ?? "", key: request.headers["idempotency-key"] as string | undefined });
      response.setHeader("content-type", request.url === "/page" ? "text/plain" : "application/json");
      response.end(request.url === "/page" ? "fixture page: hello from the local web" : JSON.stringify({ ticket: hits.length }));
    });
    await new Promise<void>((resolve) => fixture.listen(0, "127.0.0.1", resolve));
    fixtureURL = `http://127.0.0.1:${(fixture.address() as AddressInfo).port}/page`;
    ticketTool = `apiVersion: core.orka.ai/v1alpha1
kind: Tool
metadata: {name: ticket}
spec:
  description: Opens a ticket
  brokeredToolClass: write
  parameters: {type: object, properties: {title: {type: string}}}
  http: {url: "${fixtureURL.replace("/page", "/ticket")}", method: POST}
`;
    git = await startGitPeer();
    await git.createRepo("o/app", { files: { "README.md": "hello\n" }, branch: "main" });
    git.addToken(GIT_TOKEN, "reader", { "o/app": "read" });
    ({ orka, peer, stop } = await startOrkaWithPeer(
      `${peerProviderYaml("claude-peer", "anthropic", PROVIDER_KEY)}---
apiVersion: core.orka.ai/v1alpha1
kind: Agent
metadata: {name: coder}
spec:
  model: {provider: claude-peer, name: claude-test-model}
  runtime: {type: claude, defaultAllowedTools: [Read, Grep, web_fetch, remember]}
---
apiVersion: core.orka.ai/v1alpha1
kind: Agent
metadata: {name: lead}
spec: {providerRef: {name: peer}, model: {name: m-lead}, coordination: {enabled: true, allowedAgents: [{name: coder}]}}
---
apiVersion: v1
kind: Secret
metadata: {name: git-read}
stringData: {token: ${GIT_TOKEN}}
---
${ticketTool}`,
      { ...STAND_IN_CLAUDE_ENV, ORKA_ALLOW_LOOPBACK_EGRESS: "true", ORKA_MARKER_OF_THE_SERVER: "server-env-marker", ORKA_GIT_CONFIG: git.clientConfigFile },
    ));
  }, 60_000);
  afterAll(async () => {
    await stop?.();
    await new Promise((resolve) => fixture?.close(resolve));
    await git?.close();
  });

  async function runTask(name: string, script: Record<string, unknown>, extra: Record<string, unknown> = {}) {
    const created = await orka.api("POST", "/api/v1/tasks", { metadata: { name }, spec: { type: "agent", agentRef: { name: "coder" }, prompt: JSON.stringify(script), ...extra } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    return orka.waitFor(name, ["Succeeded", "Failed"], 60_000);
  }

  const resultOf = async (name: string) => JSON.parse((await orka.api("GET", `/api/v1/tasks/${name}/result`)).body.result ?? "null");

  it("lists exactly the brokered tools and runs web_fetch through the broker, the CLI's answer being the result", async () => {
    const task = await runTask("fetches", { calls: [{ tool: "web_fetch", arguments: { url: fixtureURL } }], print: "done" });
    expect(task.status.phase, task.status.message).toBe("Succeeded");
    const answer = await resultOf("fetches");
    expect(answer.tools.sort()).toEqual(["remember", "web_fetch"]);
    expect(answer.calls[0].error, JSON.stringify(answer.calls[0].error)).toBeUndefined();
    expect(answer.calls[0].result.isError).toBe(false);
    expect(answer.calls[0].result.content[0].text).toContain("fixture page: hello from the local web");
    expect(answer.print).toBe("done");
  });

  it("builds the CLI's environment from nothing: no Provider key, no server variables, a private HOME", async () => {
    const task = await runTask("environment", { env: true });
    expect(task.status.phase, task.status.message).toBe("Succeeded");
    const { env } = await resultOf("environment");
    const text = JSON.stringify(env);
    expect(text).not.toContain(PROVIDER_KEY);
    expect(text).not.toContain("server-env-marker");
    expect(Object.keys(env).filter((name) => name.startsWith("ORKA_") && name !== "ORKA_WORKSPACE")).toEqual([]);
    expect(env.HOME).toMatch(/\/home$/);
    expect(env.HOME).not.toBe(process.env.HOME);
  });

  it("sandboxes the CLI: it cannot read the data dir's secret.key, nor the server's environment through /proc", async () => {
    const secretKey = join(orka.dataDir, "state", "secret.key");
    expect(existsSync(secretKey)).toBe(true);
    const task = await runTask("sandboxed", { readFiles: [secretKey], procEnviron: true });
    expect(task.status.phase, task.status.message).toBe("Succeeded");
    const { read, procEnviron } = await resultOf("sandboxed");
    expect(read[secretKey]).toEqual({ error: "ENOENT" });
    const environs = Object.values(procEnviron as Record<string, unknown>).filter((text): text is string => typeof text === "string");
    expect(environs.some((text) => text.includes("ORKA_WORKSPACE="))).toBe(true);
    expect(environs.some((text) => text.includes("server-env-marker") || text.includes("ORKA_ADMIN_TOKEN"))).toBe(false);
  });

  it("refuses a native name and a tool the session was not given, and nothing runs", async () => {
    const before = hitsOn("/ticket").length;
    const task = await runTask("refused", { calls: [{ tool: "Read", arguments: { file_path: "/etc/hostname" } }, { tool: "ticket", arguments: { title: "not given" } }] });
    expect(task.status.phase, task.status.message).toBe("Succeeded");
    const { calls } = await resultOf("refused");
    expect(calls.map((call: any) => call.error?.code)).toEqual([-32001, -32001]);
    expect(calls[1].error.message).toContain("MCP tool call is not authorized");
    expect(hitsOn("/ticket").length).toBe(before);
  });

  it("runs a consequential call once per call id: the same id again is replayed, with other arguments refused", async () => {
    const ticket = (title: string) => ({ tool: "ticket", id: "call-ticket-1", arguments: { title } });
    const task = await runTask("ticket-once", { calls: [ticket("first"), ticket("first"), ticket("second")] }, { agentRuntime: { allowedTools: ["ticket"] } });
    expect(task.status.phase, task.status.message).toBe("Succeeded");
    const { tools, calls } = await resultOf("ticket-once");
    expect(tools).toEqual(["ticket"]);
    expect(hitsOn("/ticket"), JSON.stringify(calls)).toHaveLength(1);
    expect(hitsOn("/ticket")[0].key).toMatch(/^[0-9a-f]{64}$/);
    expect(calls[0].result.isError).toBe(false);
    expect(calls[1].result).toMatchObject({ isError: false, _meta: { "orka.replayed": true }, content: calls[0].result.content });
    expect(calls[2].error).toMatchObject({ code: -32001 });
  });

  it("refuses a custom Tool that was edited after the session started", async () => {
    const before = hitsOn("/ticket").length;
    const created = await orka.api("POST", "/api/v1/tasks", {
      metadata: { name: "edited-tool" },
      spec: { type: "agent", agentRef: { name: "coder" }, agentRuntime: { allowedTools: ["ticket"] }, prompt: JSON.stringify({ calls: [{ tool: "ticket", arguments: { title: "a" } }, { tool: "ticket", delayMs: 3_000, arguments: { title: "b" } }] }) },
    });
    expect(created.status).toBe(201);
    for (const deadline = Date.now() + 30_000; hitsOn("/ticket").length === before; await new Promise((done) => setTimeout(done, 50))) {
      if (Date.now() > deadline) throw new Error("the session never called the Tool");
    }
    const edited = await orka.cli(["apply", "-f", "-"], ticketTool.replace("Opens a ticket", "Opens a ticket, edited"));
    expect(edited.code, edited.stderr).toBe(0);
    expect((await orka.waitFor("edited-tool", ["Succeeded", "Failed"], 30_000)).status.phase).toBe("Succeeded");
    const { calls } = await resultOf("edited-tool");
    expect(calls[0].result.isError).toBe(false);
    expect(calls[1].error).toMatchObject({ code: -32001 });
    expect(calls[1].error.message).toContain("changed");
    expect(hitsOn("/ticket").length).toBe(before + 1);
  });

  it("kills everything in the session's sandbox when the Task times out", async () => {
    const script = { spawnChild: "setsid", sleep: 60, print: `sleepy-${Date.now()}` };
    const running = runTask("sleepy", script, { timeout: "4s" });
    // The CLI's own pids are its sandbox's: find it on the host by its prompt, and its grandchild by parent.
    let pids: number[] = [];
    for (const deadline = Date.now() + 20_000; pids.length < 2; await new Promise((done) => setTimeout(done, 100))) {
      if (Date.now() > deadline) throw new Error("the CLI and its grandchild were not seen running");
      pids = cliAndChild(script.print);
    }
    const task = await running;
    expect(task.status.phase).toBe("Failed");
    expect(task.status.message).toContain("timed out");
    for (const deadline = Date.now() + 10_000; !pids.every(notRunning); await new Promise((done) => setTimeout(done, 100))) {
      if (Date.now() > deadline) throw new Error(`processes still running: ${pids.filter((pid) => !notRunning(pid))}`);
    }
  });

  it("fails a read-intent Task whose CLI changed the checkout, and validates one that did not", async () => {
    const workspace = { intent: "read", gitRepo: REPO, readCredentialRef: "git-read" };
    const task = await runTask("writes-anyway", { writeFile: "notes.txt" }, { workspace });
    expect(task.status.phase, JSON.stringify(task.status)).toBe("Failed");
    expect(task.status.delivery).toMatchObject({ outcome: "ReadOnlyWorkspaceModified" });
    expect(task.status.message).toContain("delivery ReadOnlyWorkspaceModified");
    expect((await resultOf("writes-anyway")).files).toEqual(["notes.txt"]);
    // A .gitignore the CLI writes does not hide what it wrote.
    const hidden = await runTask("writes-hidden", { writeFiles: { "cache/.gitignore": "*\n", "cache/loot.txt": "hidden write\n" } }, { workspace });
    expect(hidden.status.phase).toBe("Failed");
    expect(hidden.status.delivery).toMatchObject({ outcome: "ReadOnlyWorkspaceModified" });
    expect((await resultOf("writes-hidden")).files).toEqual(["cache/.gitignore", "cache/loot.txt"]);
    const untouched = await runTask("reads-only", { print: "looked" }, { workspace });
    expect(untouched.status.phase, untouched.status.message).toBe("Succeeded");
    expect(untouched.status.delivery).toMatchObject({ outcome: "ReadValidated" });
  });

  it("gives delegated runtime children send_message and check_messages through their brokers", async () => {
    const sender = { calls: [{ tool: "send_message", arguments: { to_task: "*", content: "hello sibling, from a coding CLI" } }] };
    const listener = { calls: [{ tool: "check_messages", delayMs: 3_000, arguments: {} }] };
    const results = (body: Record<string, unknown>) => toolResultsOf(body).map((text) => JSON.parse(text));
    peer.script("m-lead", [
      {
        toolCalls: [
          { name: "delegate_task", arguments: { agent: "coder", prompt: JSON.stringify(listener) } },
          { name: "delegate_task", arguments: { agent: "coder", prompt: JSON.stringify(sender) } },
        ],
      },
      (body) => ({ toolCalls: [{ name: "wait_for_tasks", arguments: { tasks: results(body).map((r) => r.taskName), timeout: "60s" } }] }),
      { text: "both done" },
    ]);
    const created = await orka.api("POST", "/api/v1/tasks", { metadata: { name: "lead-task" }, spec: { type: "ai", agentRef: { name: "lead" }, prompt: "delegate two" } });
    expect(created.status).toBe(201);
    const lead = await orka.waitFor("lead-task", ["Succeeded", "Failed"], 90_000);
    expect(lead.status.phase, lead.status.message).toBe("Succeeded");
    const answers = await Promise.all(lead.status.childTasks.map(async (child: { name: string }) => JSON.parse((await orka.api("GET", `/api/v1/tasks/${child.name}/result`)).body.result)));
    for (const { tools } of answers) expect(tools).toEqual(expect.arrayContaining(["send_message", "check_messages"]));
    const calls = answers.flatMap((answer) => answer.calls);
    expect(calls.map((call: any) => [call.tool, call.error, call.result?.isError]), JSON.stringify(calls)).toEqual(expect.arrayContaining([["send_message", undefined, false], ["check_messages", undefined, false]]));
    const heard = calls.find((call: any) => call.tool === "check_messages").result.content[0].text;
    expect(heard).toContain("hello sibling, from a coding CLI");
  });
});
