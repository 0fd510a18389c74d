// A whole GitHub setting for tool tests: the git peer and the GitHub peer on one set of repositories,
// the LLM peer playing the model, and Orka embedded in the test process, so a test can write what
// another part of Orka would have written (a publisher's delivery receipt) straight into the store.
import { toolResultsOf, startLlmPeer, type LlmPeer, type ScriptedPeerTurn } from "../peers/llm-server.ts";
import type { GitPeer } from "../peers/git-server.ts";
import type { GithubPeer } from "../peers/github-server.ts";
import type { RunningOrka } from "../../src/server.ts";
import type { Delivery, Task, TaskSpec, TaskStatus } from "../../src/resources/task.ts";
import { EMBEDDED_ADMIN_TOKEN, startEmbeddedOrka } from "./embedded.ts";
import { startGithubPeers } from "./github-peers.ts";

export const FLOW_REPO = "acme/app";
export const FLOW_REPO_URL = `https://github.com/${FLOW_REPO}`;

/** One token per credential role, each a distinct GitHub account, so the peer's log tells them apart. */
export const TOKENS = {
  read: "read-token-0123456789",
  forge: "forge-token-0123456789",
  push: "push-token-0123456789",
  operator: "operator-token-0123456789",
} as const;

/** A write workspace on FLOW_REPO whose four credential roles are four Secrets. */
export const WRITE_WORKSPACE = {
  gitRepo: FLOW_REPO_URL,
  readCredentialRef: "gh-read",
  publicationCredentialRef: "gh-push",
  forgeCredentialRef: "gh-forge",
};

export interface GithubFlow {
  gitPeer: GitPeer;
  github: GithubPeer;
  llm: LlmPeer;
  orka: RunningOrka;
  api<T = any>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T }>;
  waitFor(name: string, phases: string[], timeoutMs?: number): Promise<Task>;
  /**
   * Runs an `ai` Task named `name` whose scripted model plays `turns` and then answers; returns the
   * Task and the results of every tool call, parsed when they are JSON.
   */
  run(name: string, turns: ScriptedPeerTurn[], spec?: Record<string, unknown>): Promise<{ task: Task; results: any[] }>;
  /** Writes a Task's delivery receipt as Orka's publisher would. */
  writeDelivery(name: string, delivery: Delivery): Promise<void>;
  stop(): Promise<void>;
}

const parsed = (text: string) => (text.startsWith("{") || text.startsWith("[") ? JSON.parse(text) : text);

export async function startGithubFlow(env: Record<string, string> = {}): Promise<GithubFlow> {
  const peers = await startGithubPeers();
  const { git: gitPeer, github } = peers;
  github.addToken(TOKENS.read, "reader", "read", [FLOW_REPO]);
  github.addToken(TOKENS.forge, "orka-forge", "write", [FLOW_REPO]);
  github.addToken(TOKENS.push, "orka-publisher", "write", [FLOW_REPO]);
  github.addToken(TOKENS.operator, "operator", "read");
  await github.addRepo(FLOW_REPO, { files: { "app.txt": "one\ntwo\nthree\n" } });
  const llm = await startLlmPeer();
  const orka = await startEmbeddedOrka({}, { ...peers.orkaEnv, ORKA_GITHUB_AUTO_MERGE_POLL_INTERVAL: "100ms", ...env });

  async function api<T = any>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> {
    const response = await fetch(`${orka.url}/api/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${EMBEDDED_ADMIN_TOKEN}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : undefined };
  }
  const must = async (method: string, path: string, body: unknown) => {
    const answer = await api(method, path, body);
    if (answer.status >= 300) throw new Error(`${method} ${path}: ${answer.status} ${JSON.stringify(answer.body)}`);
  };
  await must("POST", "/secrets", { name: "llm-key", stringData: { "api-key": "sk-peer-0000000000000000000" } });
  await must("POST", "/providers", { metadata: { name: "peer" }, spec: { type: "openai", baseURL: `${llm.url}/v1`, secretRef: { name: "llm-key" } } });
  for (const [name, token] of [["gh-read", TOKENS.read], ["gh-forge", TOKENS.forge], ["gh-push", TOKENS.push]]) await must("POST", "/secrets", { name, stringData: { token } });

  async function waitFor(name: string, phases: string[], timeoutMs = 30_000): Promise<Task> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const { body } = await api<Task>("GET", `/tasks/${name}`);
      if (phases.includes(body?.status?.phase ?? "")) return body;
      if (Date.now() > deadline) throw new Error(`task ${name} did not reach ${phases.join("/")}: ${JSON.stringify(body?.status)}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  return {
    gitPeer, github, llm, orka, api, waitFor,
    async run(name, turns, spec = {}) {
      const model = `m-${name}`;
      let results: string[] = [];
      llm.script(model, [
        ...turns,
        (body) => {
          results = toolResultsOf(body);
          return { text: "done" };
        },
      ]);
      const { tools, ...rest } = spec as { tools?: string[] };
      await must("POST", "/tasks", { name, type: "ai", prompt: "work with GitHub", ai: { providerRef: { name: "peer" }, model, ...(tools ? { tools } : {}) }, ...rest });
      const task = await waitFor(name, ["Succeeded", "Failed"]);
      return { task, results: results.map(parsed) };
    },
    async writeDelivery(name, delivery) {
      // The controller may write the same Task meanwhile: a stale write is read again and retried.
      for (let tries = 0; tries < 20; tries++) {
        const task = await orka.store.get<TaskSpec, TaskStatus>("Task", "default", name);
        if (!task) throw new Error(`task ${name} not found`);
        try {
          await orka.store.updateStatus({ ...task, status: { ...task.status, delivery } });
          return;
        } catch (err) {
          if ((err as { code?: string }).code !== "conflict") throw err;
        }
      }
      throw new Error(`could not write the delivery of ${name}`);
    },
    async stop() {
      await orka.close();
      await llm.close();
      await peers.stop();
    },
  };
}
