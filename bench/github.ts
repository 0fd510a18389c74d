// npm run bench: prints figures, asserts nothing.
// What a GitHub tool call costs through Orka, beside the same GitHub requests made with bare Octokit,
// both against the GitHub peer in this process. A coordinator's scripted model alternates
// check_pull_request_ci (three GitHub reads: the pull request, its check runs, its statuses) with a
// local no-op tool (file_read); a call's figure is the time from the model's answer naming it to the
// next model request carrying its result. The no-op's figure is the loop's own cost per turn, so
// GitHub call − no-op call − bare Octokit is what Orka adds to a GitHub call (worker → control plane,
// scope, Secret, client).
import { Octokit } from "@octokit/rest";
import { startGithubPeers } from "../test/helpers/github-peers.ts";
import { startLlmPeer, type ScriptedPeerTurn } from "../test/peers/llm-server.ts";
import { startBenchServer } from "./server.ts";
import { percentiles } from "./timing.ts";

const TASKS = Number(process.env.BENCH_GITHUB_TASKS ?? 3);
/** Tool-call turns per Task: within a coordinator's turn budget of 50. */
const TURNS = 48;
const WARMUP_TURNS = 2;
const READ_TOKEN = "bench-read-token-0000";
const REPO = "acme/bench";

const peers = await startGithubPeers();
const { github } = peers;
github.addToken(READ_TOKEN, "bench-reader", "read", [REPO]);
await github.addRepo(REPO);
const head = await github.commit(REPO, "topic", { "topic.txt": "change\n" });
const prNumber = await github.openPullRequest(REPO, { head: "topic", user: "dev" });
await github.addCheckRun(REPO, head, { name: "build" });

const llm = await startLlmPeer();
const orka = await startBenchServer("github", peers.orkaEnv);
const { api } = orka;

await api("POST", "/secrets", { name: "llm-key", stringData: { "api-key": "sk-bench-0000000000000000" } });
await api("POST", "/secrets", { name: "gh-read", stringData: { token: READ_TOKEN } });
await api("POST", "/providers", { metadata: { name: "peer" }, spec: { type: "openai", baseURL: `${llm.url}/v1`, secretRef: { name: "llm-key" } } });
await api("POST", "/agents", { metadata: { name: "lead" }, spec: { providerRef: { name: "peer" }, coordination: { enabled: true } } });

const githubCalls: number[] = [];
const localCalls: number[] = [];
const CI_CALL = { name: "check_pull_request_ci", arguments: { pr_number: prNumber } };
const NO_OP_CALL = { name: "file_read", arguments: { path: "absent.txt" } };

for (let t = 0; t < TASKS; t++) {
  const name = `bench-${t}`;
  const arrivals: number[] = [];
  const turns: ScriptedPeerTurn[] = Array.from({ length: TURNS }, (_, turn) => () => {
    arrivals.push(performance.now());
    return { toolCalls: [turn % 2 === 0 ? CI_CALL : NO_OP_CALL] };
  });
  llm.script(`m-${name}`, [...turns, () => (arrivals.push(performance.now()), { text: "done" })]);
  await api("POST", "/tasks", {
    name, type: "ai", agentRef: "lead", prompt: "check CI", ai: { model: `m-${name}`, tools: ["file_read"] },
    workspace: { gitRepo: `https://github.com/${REPO}`, readCredentialRef: "gh-read" },
  });
  let task: any;
  do {
    await new Promise((r) => setTimeout(r, 50));
    task = await api("GET", `/tasks/${name}`);
  } while (!["Succeeded", "Failed"].includes(task.status?.phase));
  if (task.status.phase !== "Succeeded") throw new Error(`bench task failed: ${task.status.message}`);
  for (let turn = WARMUP_TURNS; turn < TURNS; turn++) (turn % 2 === 0 ? githubCalls : localCalls).push(arrivals[turn + 1]! - arrivals[turn]!);
}

const bare = new Octokit({ baseUrl: github.baseUrl, auth: READ_TOKEN });
const [owner, repo] = REPO.split("/") as [string, string];
const bareTimes: number[] = [];
for (let run = -WARMUP_TURNS; run < githubCalls.length; run++) {
  const started = performance.now();
  const { data: pull } = await bare.rest.pulls.get({ owner, repo, pull_number: prNumber });
  await bare.rest.checks.listForRef({ owner, repo, ref: pull.head.sha, per_page: 100, page: 1 });
  await bare.rest.repos.getCombinedStatusForRef({ owner, repo, ref: pull.head.sha, per_page: 100, page: 1 });
  if (run >= 0) bareTimes.push(performance.now() - started);
}
const throughOrka = percentiles(githubCalls);
const loop = percentiles(localCalls);
const direct = percentiles(bareTimes);
console.log(JSON.stringify({ bench: "check_pull_request_ci through Orka (model answer → next model request)", runs: githubCalls.length, ...throughOrka }));
console.log(JSON.stringify({ bench: "local no-op tool call through Orka (file_read, same loop)", runs: localCalls.length, ...loop }));
console.log(JSON.stringify({ bench: "bare Octokit: the same three GitHub reads (pull request, check runs, statuses)", runs: bareTimes.length, ...direct }));
console.log(
  JSON.stringify({
    bench: "what Orka adds to a GitHub tool call, p50 (GitHub call − no-op call − bare Octokit)",
    orka_added_p50_ms: +(throughOrka.p50_ms - loop.p50_ms - direct.p50_ms).toFixed(3),
    orka_over_bare_ratio_p50: +((throughOrka.p50_ms - loop.p50_ms) / direct.p50_ms).toFixed(2),
  }),
);

await orka.close();
await llm.close();
await peers.stop();
