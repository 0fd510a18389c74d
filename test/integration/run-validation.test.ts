import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runToolCalls, type ToolCallSpec } from "../helpers/github-tasks.ts";
import { processesMatching, type OrkaUnderTest } from "../helpers/orka-server.ts";
import { startOrkaWithPeer } from "../helpers/orka-with-peer.ts";
import { startGitPeer, type GitPeer } from "../peers/git-server.ts";
import { startGithubPeer, type GithubPeer } from "../peers/github-server.ts";
import { toolResultsOf, type LlmPeer } from "../peers/llm-server.ts";

const REPO = "acme/checks";
const REPO_URL = `https://github.com/${REPO}`;
/** Shaped like no token the redaction knows, so a leak would show as itself rather than as [REDACTED]. */
const READ_TOKEN = "validation-read-token-0123456789";
/** The header git sends the read token in: the other form a leak could take. */
const READ_HEADER = Buffer.from(`x-access-token:${READ_TOKEN}`).toString("base64");
/**
 * A shell word that matches `text` without holding it or the token's base64 (which the header holds
 * whole), so the command's own text is no leak: cut in the middle.
 */
const split = (text: string) => `'${text.slice(0, text.length >> 1)}''${text.slice(text.length >> 1)}'`;

const PASS = 'cat app.txt && test "$(cat app.txt)" = two';
const FAIL = 'echo "lint: 2 problems" >&2; exit 3';
const WRITE = "echo scratch > scratch.txt";
const SEES_SCRATCH = "test -e scratch.txt && echo scratch-seen";
const LOUD = "seq 1 20000";
/** 40,000 bytes of two-byte characters on one line: the tail cannot start at a line, only at a character. */
const LOUD_ONE_LINE = "printf 'é%.0s' $(seq 1 20000)";
/** A process left running in the background ends with its command's sandbox. */
const BACKGROUND = "sleep 41 & echo started";
const REDACTS = 'echo "leaked ghp_abcdefghijklmnopqrstuvwxyz0123456789"';
const SECRETS = [
  `echo "names: $(env | cut -d= -f1 | sort | tr '\\n' ' ')"`,
  `echo "files holding the token: $(grep -rl -e ${split(READ_TOKEN)} -e ${split(READ_HEADER)} /workspace /tmp 2>/dev/null | wc -l)"`,
  `echo "env holding the token: $(env | grep -c -e ${split(READ_TOKEN)} -e ${split(READ_HEADER)})"`,
  `echo "checkout: $(ls -A | tr '\\n' ' ')"`,
].join("; ");
const SLOW = "sleep 37; echo never";

// run_validation end to end: a real Orka server; the git peer and the GitHub peer on one set of
// repositories (the pull request's head is a real commit both serve); a scripted model calling the tool.
describe("run_validation through a real server", () => {
  let gitPeer: GitPeer;
  let github: GithubPeer;
  let orka: OrkaUnderTest;
  let llm: LlmPeer;
  let stop: () => Promise<void>;
  let listener: net.Server;
  let connections = 0;
  let netCommand = "";
  let openPr = 0;
  let closedPr = 0;
  let mergedPr = 0;
  let head = "";

  const workspace = { gitRepo: REPO_URL, readCredentialRef: "gh-read" };
  const run = (calls: ToolCallSpec[], validation?: Record<string, unknown>, tools?: string[]) =>
    runToolCalls(orka, llm, calls, { workspace, ...(validation ? { validation } : {}), ...(tools ? { tools } : {}) });
  const validate = (args: Record<string, unknown>): ToolCallSpec => ({ name: "run_validation", arguments: { repo_url: REPO_URL, ...args } });

  beforeAll(async () => {
    listener = net.createServer((socket) => {
      connections++;
      socket.destroy();
    });
    await new Promise<void>((resolve) => listener.listen(0, "127.0.0.1", resolve));
    const port = (listener.address() as net.AddressInfo).port;
    netCommand = `bash -c 'exec 3<>/dev/tcp/127.0.0.1/${port}' && echo connected || echo no-network`;

    gitPeer = await startGitPeer();
    github = await startGithubPeer({ git: gitPeer });
    github.addToken(READ_TOKEN, "reader", "read", [REPO]);
    await github.addRepo(REPO, { files: { "app.txt": "one\n" } });
    head = await github.commit(REPO, "feature", { "app.txt": "two\n" });
    openPr = await github.openPullRequest(REPO, { head: "feature", title: "Two", user: "dev" });
    await github.commit(REPO, "abandoned", { "app.txt": "three\n" });
    closedPr = await github.openPullRequest(REPO, { head: "abandoned", title: "Three", user: "dev" });
    await github.closePullRequest(REPO, closedPr);
    await github.commit(REPO, "landed", { "other.txt": "x\n" });
    mergedPr = await github.openPullRequest(REPO, { head: "landed", title: "Other", user: "dev" });
    await github.mergePullRequest(REPO, mergedPr);
    ({ orka, peer: llm, stop } = await startOrkaWithPeer(
      `
apiVersion: v1
kind: Secret
metadata: {name: gh-read}
stringData: {token: ${READ_TOKEN}}`,
      { ORKA_GITHUB_API_BASE_URL: github.baseUrl, ORKA_GIT_CONFIG: gitPeer.clientConfigFile },
    ));
  }, 60_000);
  afterAll(async () => {
    await stop?.();
    await github?.stop();
    await gitPeer?.close();
    await new Promise((resolve) => listener?.close(resolve));
  });

  it("runs the chosen commands in order over one copy of the exact head: exit codes, output tails, redaction, no network, no credential", async () => {
    const commands = [PASS, FAIL, WRITE, SEES_SCRATCH, LOUD, LOUD_ONE_LINE, BACKGROUND, REDACTS, SECRETS, netCommand];
    const gitBefore = gitPeer.requests.length;
    // Named in another order, they run in the configured one: the write comes before the check that sees it.
    const { results } = await run([validate({ pr_number: openPr, commands: [...commands].reverse() }), validate({ pr_number: openPr, commands: [SEES_SCRATCH] })], { commands: [...commands, SLOW], timeout: "2m" });
    const [first, second] = results;
    expect(first).toMatchObject({ status: "failed", head_sha: head });
    expect(first.results.map((r: any) => [r.command, r.exit_code])).toEqual(commands.map((command) => [command, command === FAIL ? 3 : 0]));
    for (const result of first.results) expect(result.duration_ms).toEqual(expect.any(Number));
    const tail = Object.fromEntries(first.results.map((r: any) => [r.command, r.output_tail as string]));
    expect(tail[PASS]).toBe("two\n");
    expect(tail[FAIL]).toBe("lint: 2 problems\n");
    expect(tail[SEES_SCRATCH]).toBe("scratch-seen\n");
    // The end of the output, where failures are reported, cut at a line and marked.
    expect(tail[LOUD]).toMatch(/^\[output cut: the first \d+ bytes are left out\]\n\d+\n/);
    expect(tail[LOUD].endsWith("19999\n20000\n")).toBe(true);
    expect(Buffer.byteLength(tail[LOUD].slice(tail[LOUD].indexOf("\n") + 1))).toBeLessThanOrEqual(16 * 1024);
    const [marker, rest] = tail[LOUD_ONE_LINE].split("\n");
    expect(marker).toMatch(/^\[output cut: the first \d+ bytes are left out\]$/);
    expect(rest).toMatch(/^(é)+$/);
    expect(Buffer.byteLength(rest)).toBeGreaterThan(16 * 1024 - 2);
    expect(tail[BACKGROUND]).toBe("started\n");
    expect(processesMatching("sleep 41")).toEqual([]);
    expect(tail[REDACTS]).toBe("leaked [REDACTED]\n");

    // Adversarial: the command looks for the read token in its environment and in every file it can reach.
    const names = /^names: (.*)$/m.exec(tail[SECRETS])![1].trim().split(" ");
    expect(names).toContain("PATH");
    expect(names.filter((name) => /ORKA|GIT|TOKEN|SECRET|KEY|AUTH/i.test(name))).toEqual([]);
    expect(tail[SECRETS]).toContain("files holding the token: 0\n");
    expect(tail[SECRETS]).toContain("env holding the token: 0\n");
    expect(tail[SECRETS]).toMatch(/^checkout: app\.txt scratch\.txt $/m);
    expect(tail[SECRETS]).not.toContain("[REDACTED]");

    // No network: the connection to a listener on the host's loopback fails, and the listener saw nothing.
    expect(tail[netCommand]).toContain("no-network");
    expect(tail[netCommand]).not.toContain("connected");
    expect(connections).toBe(0);

    // The next call starts from a fresh copy: the first call's scratch file is gone.
    expect(second).toMatchObject({ status: "failed", head_sha: head, results: [{ command: SEES_SCRATCH, exit_code: 1, output_tail: "" }] });
    // The head was fetched with the read credential.
    expect(gitPeer.requests.slice(gitBefore).filter((r) => r.service === "git-upload-pack").map((r) => r.identity)).toContain("reader");
    expect(JSON.stringify(results)).not.toContain(READ_TOKEN);
  });

  it("runs every configured command when the model names none, and the time limit kills a command and skips the rest", async () => {
    const started = Date.now();
    const { results } = await run([validate({ pr_number: openPr, timeout: "2s" })], { commands: [PASS, SLOW, SEES_SCRATCH] });
    const [answer] = results;
    expect(answer).toMatchObject({ status: "timeout", head_sha: head });
    expect(answer.results.map((r: any) => [r.command, r.exit_code])).toEqual([[PASS, 0], [SLOW, -1]]);
    expect(answer.results[1].output_tail).toBe("\n[killed: the time limit of 2s was reached]");
    expect(answer.results[1].duration_ms).toBeLessThan(10_000);
    expect(Date.now() - started).toBeLessThan(30_000);
    // Killed, not left behind: no process of the slow command remains.
    expect(processesMatching("sleep 37")).toEqual([]);
  });

  /** Runs a Task and counts the requests it made of each peer (its workspace's own checkout included). */
  const counted = async (calls: ToolCallSpec[]) => {
    const before = { github: github.log.length, git: gitPeer.requests.length };
    const { results } = await run(calls, { commands: [PASS] });
    return { results, github: github.log.length - before.github, git: gitPeer.requests.length - before.git };
  };

  it("refuses a command the monitor does not configure before anything runs: no GitHub request, no clone", async () => {
    const refused = await counted([
      validate({ pr_number: openPr, commands: ["rm -rf /workspace"] }),
      validate({ pr_number: openPr, commands: [PASS, `${PASS}; touch pwned`] }),
    ]);
    expect(refused.results[0]).toMatch(/^Error executing tool: command not configured for this monitor: "rm -rf \/workspace"; pick among "cat app.txt/);
    expect(refused.results[1]).toMatch(/^Error executing tool: command not configured for this monitor: ".*; touch pwned"; pick among /);
    expect(refused.github).toBe(0);
    // A call that runs clones the head on top of what the Task's workspace fetches; a refused one does not.
    const ran = await counted([validate({ pr_number: openPr })]);
    expect(ran.results[0]).toMatchObject({ status: "passed", results: [{ command: PASS, exit_code: 0 }] });
    expect(ran.git).toBeGreaterThan(refused.git);
  });

  it("refuses a merged or closed pull request, with nothing checked out", async () => {
    const baseline = await counted([validate({ pr_number: openPr, commands: ["true"] })]);
    const { results, git } = await counted([validate({ pr_number: closedPr }), validate({ pr_number: mergedPr })]);
    expect(results).toEqual([
      `Error executing tool: pull request #${closedPr} is closed: there is no open head to validate`,
      `Error executing tool: pull request #${mergedPr} is already merged: there is no open head to validate`,
    ]);
    expect(git).toBe(baseline.git);
  });

  it("reaches a scheduled run through the spec it inherits, and the run validates with it", async () => {
    const name = "scheduled-monitor";
    let answered: string[] = [];
    llm.script(`m-${name}`, [
      { toolCalls: [validate({ pr_number: openPr })] },
      (body) => {
        answered = toolResultsOf(body);
        return { text: "validated" };
      },
    ]);
    // Every second, so that a run starts at once; the monitor is suspended as soon as one has.
    const monitor = {
      name, type: "ai", schedule: "* * * * * *", prompt: "review", ai: { providerRef: { name: "peer" }, model: `m-${name}`, tools: [] }, workspace, validation: { commands: [PASS] },
    };
    const created = await orka.api("POST", "/api/v1/tasks", monitor);
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const deadline = Date.now() + 20_000;
    let runs: any[] = [];
    while (runs.length === 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      runs = (await orka.api("GET", `/api/v1/tasks?labelSelector=orka.ai/parent-task=${name}`)).body.items;
    }
    expect((await orka.api("PUT", `/api/v1/tasks/${name}`, { ...monitor, suspend: true })).status).toBe(200);
    const run = await orka.waitFor(runs[0].metadata.name, ["Succeeded", "Failed"], 30_000);
    expect(run.spec.validation).toEqual({ commands: [PASS] });
    expect(run.status.phase).toBe("Succeeded");
    expect(JSON.parse(answered[0])).toMatchObject({ status: "passed", head_sha: head, results: [{ command: PASS, exit_code: 0, output_tail: "two\n" }] });
  });

  it("is not offered to a Task without validation commands, even when selected by name", async () => {
    const { task, results } = await run([validate({ pr_number: openPr })], undefined, ["run_validation"]);
    expect(results).toEqual(['Error executing tool: tool "run_validation" was not enabled for this task']);
    const events = (await orka.api("GET", `/api/v1/tasks/${task.metadata.name}/events`)).body.events as { summary: string }[];
    expect(events.map((e) => e.summary)).toContain(`tool "run_validation" is not offered: it runs a PR monitor's validation commands, and this Task has none (spec.validation)`);
  });

  it("refuses a Task whose validation configuration is malformed, at creation", async () => {
    const refused = async (validation: unknown) => (await orka.api("POST", "/api/v1/tasks", { name: "bad-validation", type: "ai", prompt: "x", workspace, validation })).body.error.message;
    expect(await refused({ commands: [] })).toContain("spec.validation.commands: must list at least one command");
    expect(await refused({ commands: Array.from({ length: 21 }, (_, i) => `echo ${i}`) })).toContain("must list at most 20 commands");
    expect(await refused({ commands: ["x".repeat(1001)] })).toContain("must be at most 1000 characters");
    expect(await refused({ commands: ["  "] })).toContain("must not be blank");
    expect(await refused({ commands: ["make", "make"] })).toContain("must not list a command twice");
    expect(await refused({ commands: ["make"], timeout: "31m" })).toContain("spec.validation.timeout: must be a duration from 1ms to 30m");
    expect(await refused({ commands: ["make"], image: "node:22" })).toContain(`unknown field "spec.validation.image"`);
  });
});
