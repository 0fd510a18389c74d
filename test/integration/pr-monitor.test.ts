import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { toolResultsOf, type LlmPeer, type PeerTurn } from "../peers/llm-server.ts";
import type { OrkaUnderTest } from "../helpers/orka-server.ts";
import { startOrkaWithPeer } from "../helpers/orka-with-peer.ts";

const MONITOR_TOOLS = ["list_pull_requests", "check_pr_review_marker", "check_pull_request_ci", "review_pull_request", "post_review_comment"];
const YEARLY = "0 0 1 1 *"; // the monitors never run during the test
const READ_TOKEN = "ghp_readtoken0000000000000000000000000";
const FORGE_TOKEN = "ghp_forgetoken000000000000000000000000";
const URL_TOKEN = "ghp_inurltoken00000000000000000000000";
const NAMESPACES = ["default", "team-a", "order-a", "order-b", "order-c", "order-d"];

/** A reviewer Agent (coordination on, autonomy off) in each namespace a monitor is created in. */
const reviewerIn = (namespace: string) => `
apiVersion: core.orka.ai/v1alpha1
kind: Agent
metadata: {name: reviewer, namespace: ${namespace}}
spec: {coordination: {enabled: true}}`;
const secret = (name: string, namespace: string, data: Record<string, string>) => `
apiVersion: v1
kind: Secret
metadata: {name: ${name}, namespace: ${namespace}}
stringData: ${JSON.stringify(data)}`;

const FIXTURES = [
  `apiVersion: core.orka.ai/v1alpha1
kind: Agent
metadata: {name: caller}
spec: {providerRef: {name: peer}, model: {name: m-caller}, tools: [{name: create_pr_monitor}]}`,
  `apiVersion: core.orka.ai/v1alpha1
kind: Agent
metadata: {name: solo}
spec: {providerRef: {name: peer}}`,
  `apiVersion: core.orka.ai/v1alpha1
kind: Agent
metadata: {name: autopilot}
spec: {providerRef: {name: peer}, coordination: {enabled: true, autonomous: true}}`,
  `apiVersion: core.orka.ai/v1alpha1
kind: Agent
metadata: {name: coder}
spec: {runtime: {type: claude}, coordination: {enabled: true}}`,
  ...NAMESPACES.map(reviewerIn),
  secret("gh-read", "default", { token: READ_TOKEN }),
  secret("gh-forge", "default", { token: " ", GITHUB_TOKEN: FORGE_TOKEN }),
  secret("empty-keys", "default", { token: "  ", password: "", other: "not-a-token-key-0000" }),
  secret("git-credentials", "default", { token: READ_TOKEN }),
  // Candidate order: copilot-token comes before github-token and git-token.
  secret("git-token", "order-a", { token: "ghp_gittoken000000000000000000000000000" }),
  secret("github-token", "order-a", { token: "ghp_githubtoken0000000000000000000000" }),
  secret("copilot-token", "order-a", { token: "ghp_copilottoken000000000000000000000" }),
  // A password-only Secret: the monitor records the key it must read.
  secret("git-token", "order-b", { token: "", password: "pw-of-order-b-000000000" }),
  // The first candidate that exists is the one used: an unusable one is refused, not skipped.
  secret("github-credentials", "order-c", { token: " ", GITHUB_TOKEN: "" }),
  secret("git-token", "order-c", { token: "ghp_gittokenc00000000000000000000000000" }),
  // A namespace-bound caller of its own.
  secret("key", "team-a", { "api-key": "sk-peer-0000000000000000000" }),
  `apiVersion: core.orka.ai/v1alpha1
kind: Provider
metadata: {name: peer, namespace: team-a}
spec: {type: openai, baseURL: "PEER_URL/v1", secretRef: {name: key}}`,
  `apiVersion: core.orka.ai/v1alpha1
kind: Agent
metadata: {name: caller, namespace: team-a}
spec: {providerRef: {name: peer}, model: {name: m-caller}, tools: [{name: create_pr_monitor}]}`,
].join("\n---\n");

type Call = Record<string, unknown>;
const valid = (extra: Call = {}): Call => ({ name: "reviews", repo_url: "https://github.com/o/r", schedule: YEARLY, agent_ref: "reviewer", gitSecretRef: "gh-read", ...extra });
const without = (call: Call, field: string): Call => Object.fromEntries(Object.entries(call).filter(([key]) => key !== field));

/** Each scenario is one caller Task: its prompt names the scenario, and the model makes all its calls in one turn. */
const REFUSED: [label: string, call: Call, errorType: string, error: string | RegExp][] = [
  ["a pull request URL", valid({ repo_url: "https://github.com/o/r/pull/7" }), "invalid_arguments", "repo_url is a pull request URL, not a repository root (a monitor reviews every open pull request of the repository): give https://github.com/o/r instead"],
  ["an issue URL", valid({ repo_url: "https://github.com/o/r/issues/7" }), "invalid_arguments", /^repo_url is an issue URL, .*: give https:\/\/github.com\/o\/r instead$/],
  ["a branch URL", valid({ repo_url: "https://github.com/o/r/tree/main" }), "invalid_arguments", /^repo_url is a branch or tree URL, .*: give https:\/\/github.com\/o\/r instead$/],
  ["a file URL", valid({ repo_url: "https://github.com/o/r/blob/main/README.md" }), "invalid_arguments", /^repo_url is a file URL, /],
  ["a commit URL", valid({ repo_url: "https://github.com/o/r/commit/0123abc" }), "invalid_arguments", /^repo_url is a commit URL, /],
  ["a query string", valid({ repo_url: "https://github.com/o/r?tab=readme" }), "invalid_arguments", "repo_url must not contain a query string or a fragment: give https://github.com/o/r instead"],
  ["a fragment", valid({ repo_url: "https://github.com/o/r#readme" }), "invalid_arguments", "repo_url must not contain a query string or a fragment: give https://github.com/o/r instead"],
  ["another host", valid({ repo_url: "https://gitlab.com/o/r" }), "invalid_arguments", /^repo_url must be a github.com repository \(PR monitors support no other host\): give https:\/\/github.com\/owner\/repo, /],
  ["plain http", valid({ repo_url: "http://github.com/o/r" }), "invalid_arguments", "repo_url must use https://, not http://: give https://github.com/o/r instead"],
  ["credentials in an https URL", valid({ repo_url: `https://x-access-token:${URL_TOKEN}@github.com/o/r` }), "invalid_arguments", /^repo_url must not contain credentials: .* gitSecretRef$/],
  ["a token as the ssh user", valid({ repo_url: `${URL_TOKEN}@github.com:o/r.git` }), "invalid_arguments", /^repo_url must not contain credentials: /],
  ["a bad URL before a missing Agent", valid({ repo_url: "https://github.com/o/r/pull/7", agent_ref: "missing" }), "invalid_arguments", /^repo_url is a pull request URL/],
  ["a missing Agent", valid({ agent_ref: "missing" }), "not_found", 'agent "missing" not found in namespace "default"'],
  ["a missing Agent before a bad review_event", valid({ agent_ref: "missing", review_event: "LGTM" }), "not_found", 'agent "missing" not found in namespace "default"'],
  ["an Agent without coordination", valid({ agent_ref: "solo" }), "invalid_arguments", 'agent "solo" does not have coordination enabled, which a PR monitor needs'],
  ["an Agent with a runtime", valid({ agent_ref: "coder" }), "invalid_arguments", 'agent "coder" has a coding-agent runtime (spec.runtime); a PR monitor runs as an AI Task'],
  ["an autonomous Agent", valid({ agent_ref: "autopilot" }), "invalid_arguments", 'agent "autopilot" has autonomous coordination enabled; a PR monitor needs it disabled'],
  ["an unknown review_event", valid({ review_event: "LGTM" }), "invalid_arguments", 'review_event must be COMMENT, APPROVE or REQUEST_CHANGES, not "LGTM"'],
  ["no name", without(valid(), "name"), "invalid_arguments", "invalid arguments: name: is required: a human-readable monitor name"],
  ["a blank repo_url", valid({ repo_url: "  " }), "invalid_arguments", /^invalid arguments: repo_url: is required/],
  ["a schedule that is not cron", valid({ schedule: "every hour" }), "invalid_arguments", /^invalid arguments: schedule: must be a cron expression/],
  ["too many validation commands", valid({ validation: { commands: Array.from({ length: 21 }, (_, i) => `make check-${i}`) } }), "invalid_arguments", "invalid arguments: validation.commands: must list at most 20 commands"],
  ["a validation timeout over 30 minutes", valid({ validation: { commands: ["make test"], timeout: "45m" } }), "invalid_arguments", /^invalid arguments: validation.timeout: must be a duration from 1ms to 30m/],
  ["a validation image", valid({ validation: { commands: ["make test"], image: "node:22" } }), "invalid_arguments", 'invalid arguments: unknown field "validation.image": remove it or correct the spelling'],
  ["a missing Provider", valid({ provider_ref: "nope" }), "not_found", 'provider "nope" not found in namespace "default"'],
  ["a missing read Secret", valid({ gitSecretRef: "nope" }), "not_found", 'read credentialRef "nope" not found in namespace "default"'],
  ["a read Secret without a usable key", valid({ gitSecretRef: "empty-keys" }), "invalid_arguments", 'read credential Secret "empty-keys" in namespace "default" has no non-empty token, password or GITHUB_TOKEN key'],
  ["the read Secret as forge Secret", valid({ forgeSecretRef: "gh-read" }), "invalid_arguments", /^forgeSecretRef "gh-read" is also the read credential/],
  ["a missing forge Secret", valid({ forgeSecretRef: "nope-forge" }), "not_found", 'forge credentialRef "nope-forge" not found in namespace "default"'],
  ["a forge Secret without a usable key", valid({ forgeSecretRef: "empty-keys" }), "invalid_arguments", 'forge credential Secret "empty-keys" in namespace "default" has no non-empty token, password or GITHUB_TOKEN key'],
  ["an unusable first candidate", without(valid({ namespace: "order-c" }), "gitSecretRef"), "invalid_arguments", 'read credential Secret "github-credentials" in namespace "order-c" has no non-empty token, password or GITHUB_TOKEN key'],
  ["no candidate at all", without(valid({ namespace: "order-d" }), "gitSecretRef"), "invalid_arguments", 'readCredentialRef is required for PR monitor GitHub access; no supported git credential Secret found in namespace "order-d"'],
];

const CREATED: Call[] = [
  {
    name: "Widgets reviews",
    repoUrl: "git@github.com:Acme/Widgets.git",
    schedule: YEARLY,
    agent_ref: "reviewer",
    provider_ref: "peer",
    readCredentialRef: "gh-read",
    forgeSecretRef: "gh-forge",
    per_page: 500,
    review_event: " approve ",
    prompt: "Focus on SQL injection.",
    validation: { commands: ["npm test", " make lint "], timeout: "15m" },
  },
  without(valid({ name: "order-a reviews", namespace: "order-a", repo_url: "https://github.com/o/r.git" }), "gitSecretRef"),
  without(valid({ name: "order-b reviews", namespace: "order-b", repo_url: "https://github.com/o/r/", per_page: -3, prompt: "   " }), "gitSecretRef"),
  valid({ name: "fourth" }),
  valid({ name: "fifth" }),
  valid({ name: "one too many" }),
];

const LEAK_PROBES: Call[] = [
  valid({ namespace: "default" }), // gh-read exists there
  valid({ namespace: "default", gitSecretRef: "nope" }),
  without(valid({ namespace: "default" }), "gitSecretRef"), // git-credentials exists there
  without(valid({ namespace: "order-d" }), "gitSecretRef"), // nothing exists there
  valid({ namespace: "order-d", gitSecretRef: "gh-read" }),
];

const SCENARIOS: Record<string, Call[]> = {
  refusals: REFUSED.map(([, call]) => call),
  creations: CREATED,
  probes: LEAK_PROBES,
  "own namespace": [valid({ namespace: "team-a", gitSecretRef: "nope" })],
};

const userPrompt = (body: any): string => (body.messages as any[]).find((m) => m.role === "user")?.content ?? "";

describe("create_pr_monitor, called by a scripted model through a real server", () => {
  let orka: OrkaUnderTest;
  let peer: LlmPeer;
  let stop: () => Promise<void>;
  let userToken: string;
  const results: Record<string, any[]> = {};
  const tasksBefore: Record<string, number> = {};

  const tasksIn = async (namespace: string): Promise<any[]> => (await orka.api("GET", `/api/v1/tasks?namespace=${namespace}&limit=500`)).body.items;
  const monitorsIn = async (namespace: string) => (await tasksIn(namespace)).filter((t) => t.metadata.annotations?.["orka.ai/pr-monitor-name"] !== undefined);
  const run = async (scenario: string, namespace = "default", token?: string) => {
    const name = `caller-${scenario.replaceAll(" ", "-")}`;
    const created = await orka.api("POST", `/api/v1/tasks?namespace=${namespace}`, { name, type: "ai", agentRef: "caller", prompt: scenario }, token);
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect((await orka.waitFor(name, ["Succeeded", "Failed"], 30_000, namespace)).status.phase).toBe("Succeeded");
    const answered = peer.requests.find((r) => userPrompt(r.body) === scenario && toolResultsOf(r.body).length > 0);
    results[scenario] = toolResultsOf(answered!.body).map((text) => JSON.parse(text));
    expect(results[scenario]).toHaveLength(SCENARIOS[scenario].length);
  };

  beforeAll(async () => {
    ({ orka, peer, stop } = await startOrkaWithPeer(FIXTURES));
    peer.script("m-caller", [(body): PeerTurn => ({ toolCalls: SCENARIOS[userPrompt(body)].map((args) => ({ name: "create_pr_monitor", arguments: args })) }), { text: "done" }]);
    const issued = await orka.api("POST", "/api/v1/auth/tokens", { name: "team-a-user", namespace: "team-a", role: "user" });
    expect(issued.status, JSON.stringify(issued.body)).toBe(201);
    userToken = issued.body.token;
    for (const namespace of NAMESPACES) tasksBefore[namespace] = (await tasksIn(namespace)).length;
    await run("refusals");
    await run("probes", "team-a", userToken);
    await run("own namespace", "team-a", userToken);
    await run("creations");
  }, 120_000);
  afterAll(async () => {
    await stop();
  });

  it.each(REFUSED.map(([label, , errorType, error], index) => [label, index, errorType, error] as const))("refuses %s as a result, not an error", (_label, index, errorType, error) => {
    const answer = results.refusals[index];
    expect(answer).toMatchObject({ success: false, errorType });
    if (typeof error === "string") expect(answer.error).toBe(error);
    else expect(answer.error).toMatch(error);
    expect(answer.suggestion).toEqual(expect.any(String));
  });

  it("creates nothing for a refused call, and never echoes a token from the URL or a Secret", async () => {
    const refusalTasks = (await tasksIn("default")).filter((t) => t.metadata.labels?.["orka.ai/parent-task"] === "caller-refusals");
    expect(refusalTasks).toEqual([]);
    for (const namespace of ["order-c", "order-d"]) expect(await tasksIn(namespace)).toEqual([]);
    // The model sent the URL token itself; no answer it got back, and no Task created, holds it or a Secret's value.
    const stored = await Promise.all(NAMESPACES.map(tasksIn));
    const everything = JSON.stringify(results) + peer.requests.flatMap((r) => toolResultsOf(r.body)).join("\n") + JSON.stringify(stored);
    expect(everything).toContain("repo_url must not contain credentials");
    for (const token of [URL_TOKEN, READ_TOKEN, FORGE_TOKEN, "pw-of-order-b-000000000"]) expect(everything).not.toContain(token);
  });

  it("tells a caller that may not create Tasks in a namespace nothing about the Secrets there", async () => {
    const probes = results.probes;
    for (const answer of probes) expect(answer).toMatchObject({ success: false, errorType: "permission_denied" });
    // Whether the named Secret, a candidate Secret or none exists, the answer is the same but for the namespace's name.
    const shapes = new Set(probes.map((answer, index) => JSON.stringify({ ...answer, error: answer.error.replaceAll(`"${LEAK_PROBES[index].namespace}"`, '"<ns>"') })));
    expect(shapes.size).toBe(1);
    expect(probes[0].error).toBe('namespace "default" is not permitted for this task: its requester is bound to namespace "team-a"');
    expect(await monitorsIn("team-a")).toEqual([]);
    // In its own namespace it may create monitors, so it may learn what is missing there.
    expect(results["own namespace"][0]).toMatchObject({ success: false, errorType: "not_found", error: 'read credentialRef "nope" not found in namespace "team-a"' });
  });

  it("creates the scheduled monitor Task: generated name, both annotations, exactly five tools, the canonical repository, its Secrets and prompt", async () => {
    const [first] = results.creations;
    expect(first).toEqual({
      success: true,
      data: { name: expect.stringMatching(/^caller-creations-child-[0-9a-f]{5}$/), monitor_name: "Widgets reviews", namespace: "default", schedule: YEARLY, message: "PR monitor task created" },
    });
    const task = (await orka.api("GET", `/api/v1/tasks/${first.data.name}?namespace=default`)).body;
    expect(task.metadata.annotations).toMatchObject({ "orka.ai/pr-monitor-name": "Widgets reviews", "orka.ai/disable-coordination-tool-injection": "true", "orka.ai/parent-task-name": "caller-creations" });
    expect(task.metadata.labels).toMatchObject({ "orka.ai/parent-task": "caller-creations" });
    const repo = "https://github.com/Acme/Widgets";
    expect(task.spec).toMatchObject({ type: "ai", schedule: YEARLY, agentRef: { name: "reviewer" }, env: [{ name: "ORKA_GIT_REPO", value: repo }] });
    expect(task.spec.ai.providerRef).toEqual({ name: "peer" });
    expect(task.spec.ai.tools).toEqual(MONITOR_TOOLS);
    expect(task.spec.workspace).toEqual({ gitRepo: repo, readCredentialRef: "gh-read", forgeCredentialRef: "gh-forge", forgeCredentialKey: "GITHUB_TOKEN" });
    // Its runs inherit the validation commands, which give them run_validation; the prompt tells them to use it.
    expect(task.spec.validation).toEqual({ commands: ["npm test", "make lint"], timeout: "15m" });
    const prompt: string = task.spec.ai.prompt;
    expect(prompt).toContain(`Pass repo_url "${repo}" unchanged to every tool call`);
    for (const step of ["list_pull_requests with repo_url and per_page 100", "call run_validation with repo_url and the pr_number", "without head_sha", "check_pull_request_ci", "correctness, tests, security and maintainability", "exactly ONE review", "marker from step 2, unchanged", "review event APPROVE, unless REQUEST_CHANGES is clearly warranted"]) {
      expect(prompt).toContain(step);
    }
    expect(prompt.endsWith("\n\nAdditional instructions:\nFocus on SQL injection.")).toBe(true);
    expect((await orka.waitFor(first.data.name, ["Scheduled"], 10_000)).status.phase).toBe("Scheduled");
  });

  it("picks the first existing default Secret and records a key other than token; without a forge Secret it warns", async () => {
    const [, orderA, orderB] = results.creations;
    expect(orderA.data).toMatchObject({ namespace: "order-a", warning: "reviews cannot be posted: no forge credential" });
    const a = (await orka.api("GET", `/api/v1/tasks/${orderA.data.name}?namespace=order-a`)).body;
    expect(a.spec.workspace).toEqual({ gitRepo: "https://github.com/o/r", readCredentialRef: "copilot-token" });
    expect(a.spec.ai.prompt).toContain("per_page 30");
    expect(a.spec.ai.prompt).toContain("review event COMMENT");
    expect(a.spec.ai.prompt).not.toContain("Additional instructions");
    expect(a.spec.validation).toBeUndefined();
    expect(a.spec.ai.prompt).not.toContain("run_validation");
    // Created in another namespace than its caller's: linked by annotation, not owned.
    expect(a.metadata.annotations).toMatchObject({ "orka.ai/parent-task-namespace": "default" });
    const b = (await orka.api("GET", `/api/v1/tasks/${orderB.data.name}?namespace=order-b`)).body;
    expect(b.spec.workspace).toEqual({ gitRepo: "https://github.com/o/r", readCredentialRef: "git-token", readCredentialKey: "password" });
    expect(b.spec.ai.prompt).toContain("per_page 30");
    expect(b.spec.ai.prompt).not.toContain("Additional instructions");
  });

  it("holds at most five monitors per calling Task", async () => {
    const answers = results.creations;
    expect(answers.slice(0, 5).map((a) => a.success)).toEqual([true, true, true, true, true]);
    expect(answers[5]).toMatchObject({ success: false, errorType: "limit_reached", error: "task creation limit reached (max 5 PR monitors per task)" });
    const all = (await Promise.all(NAMESPACES.map(monitorsIn))).flat();
    expect(all.map((t) => t.metadata.annotations["orka.ai/pr-monitor-name"]).sort()).toEqual(["Widgets reviews", "fifth", "fourth", "order-a reviews", "order-b reviews"]);
    for (const namespace of ["order-c", "order-d", "team-a"]) {
      expect((await tasksIn(namespace)).length - tasksBefore[namespace]).toBe(namespace === "team-a" ? 2 : 0); // team-a: its two callers
    }
  });
});
