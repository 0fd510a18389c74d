import { describe, expect, it } from "vitest";
import { taskGrantFailures, type TaskFacts } from "../../src/auth/grants.ts";
import { contextList, type TransactionClaims } from "../../src/auth/transaction-token.ts";

const claims = (context: Record<string, string>, scopes = ["orka:tasks:create"]): TransactionClaims => ({
  profile: "transaction-token",
  id: "txn-1",
  issuer: "https://issuer",
  audience: "orka",
  subject: "alice",
  requestingWorkload: "ci",
  scope: scopes.join(" "),
  scopes,
  context,
  contextDigest: "sha256:x",
});

const facts = (extra: Partial<TaskFacts> = {}): TaskFacts => ({
  name: "t1",
  namespace: "team",
  type: "ai",
  agent: { name: "writer", namespace: "team" },
  models: [{ provider: "openai", providerNamespace: "team", model: "gpt-5" }, { provider: "backup", providerNamespace: "team", model: "small" }],
  tools: ["web_search", "recall_memory"],
  credentialSecrets: [],
  dependencies: [{ field: "agentRef", namespace: "team" }],
  isChild: false,
  ...extra,
});

const reasons = (context: Record<string, string>, extra?: Partial<TaskFacts>, scopes?: string[]) =>
  taskGrantFailures(claims(context, scopes), facts(extra), {}).map((f) => `${f.reason}: ${f.detail}`);

describe("the grant checks a transaction token's context makes on a Task", () => {
  it("reads list constraints as JSON or CSV, where an empty list allows nothing", () => {
    expect(contextList({ a: '["x", "y"]' }, "a")).toEqual(["x", "y"]);
    expect(contextList({ a: "x, y" }, "a")).toEqual(["x", "y"]);
    expect(contextList({ a: "[]" }, "a")).toEqual([]);
    expect(contextList({ a: "[broken" }, "a")).toEqual([]);
    expect(contextList({}, "a")).toBeUndefined();
  });

  it("passes a Task inside every constraint", () => {
    const context = {
      namespace: "team", taskName: "t1", taskType: "ai", agent: "team/writer", allowedAgents: '["writer"]',
      allowedProviders: "openai, backup", allowedModels: '["gpt-5", "backup/small"]', allowedTools: '["web_search", "recall_memory"]',
    };
    expect(reasons(context)).toEqual([]);
  });

  it("checks identity, type, agent, every provider and model including fallbacks", () => {
    expect(reasons({ taskName: "other", taskType: "container" })).toEqual(['task_identity: task name "t1" is not "other"', 'task_type: task type "ai" is not "container"']);
    expect(reasons({ allowedAgents: "[]" })).toEqual(['agent_not_allowed: agent "writer" is not in allowedAgents']);
    expect(reasons({ allowedAgents: "writer" }, { agent: undefined })).toEqual(["agent_not_allowed: an agent is required by the token context"]);
    expect(reasons({ allowedProviders: "openai" })).toEqual(['provider_not_allowed: provider "backup" is not allowed by token context']);
    expect(reasons({ model: "gpt-5" })).toEqual(['model_not_allowed: model "small" is not allowed by token context']);
    expect(reasons({ namespace: "other" })).toEqual([
      'namespace_mismatch: namespace "team" is outside the token\'s namespace "other"',
      'namespace_mismatch: namespace "team" is outside the token\'s namespace "other"',
    ]);
  });

  it("pins the workspace repository, branch and ref; a branch-only constraint forbids a ref", () => {
    const repo = "https://git.example.com/team/app";
    expect(reasons({ repo }, { workspace: { repo: `${repo}.git`, branch: "main" } })).toEqual([]);
    expect(reasons({ repo }, { workspace: { repo: "https://git.example.com/team/other" } })).toEqual([`workspace_not_allowed: workspace repository must be "${repo}"`]);
    expect(reasons({ repo })).toEqual([`workspace_not_allowed: workspace repository must be "${repo}"`]);
    expect(reasons({ branch: "main" }, { workspace: { repo, branch: "dev" } })).toEqual(['workspace_not_allowed: workspace branch "dev" is not "main"']);
    expect(reasons({ branch: "main" }, { workspace: { repo, ref: "abc123" } })).toEqual(["workspace_not_allowed: the token context pins a branch, so a ref may not be chosen"]);
    expect(reasons({ ref: "abc123" }, { workspace: { repo, ref: "def456" } })).toEqual(['workspace_not_allowed: workspace ref must be "abc123"']);
  });

  it("pins where a change is published too: the publication repository and the push branch", () => {
    const repo = "https://github.com/org/app";
    expect(reasons({ repo }, { workspace: { repo, publicationRepo: `${repo}.git`, pushBranch: "orka/fix" } })).toEqual([]);
    expect(reasons({ repo }, { workspace: { repo, publicationRepo: "https://github.com/org/infra" } })).toEqual([`workspace_not_allowed: workspace publication repository must be "${repo}"`]);
    expect(reasons({ repo, branch: "feature" }, { workspace: { repo, branch: "feature", pushBranch: "refs/heads/feature" } })).toEqual([]);
    expect(reasons({ repo, branch: "feature" }, { workspace: { repo, branch: "feature", pushBranch: "main" } })).toEqual(['workspace_not_allowed: workspace pushBranch "main" is not "feature"']);
  });

  it("needs every effective tool granted, names a child's, and refuses an unrestricted coding runtime", () => {
    expect(reasons({ allowedTools: "web_search" })).toEqual(['tool_not_allowed: tool "recall_memory" is not allowed by token context']);
    expect(reasons({ allowedTools: "web_search" }, { isChild: true })).toEqual(['tool_not_allowed: child task tool "recall_memory" is not allowed by transaction context']);
    expect(reasons({ allowedTools: '["Bash"]' }, { type: "agent", tools: "unrestricted" })).toEqual([
      "tool_not_allowed: agent runtime tools are unrestricted by task or agent while token context restricts allowedTools",
    ]);
    expect(reasons({}, { type: "agent", tools: "unrestricted" })).toEqual([]);
  });

  it("binds credentials to the credential scope and tctx.secret", () => {
    expect(reasons({ secret: "repo-cred" }, { credentialSecrets: ["repo-cred"] }, ["orka:secrets:credentials:read"])).toEqual([]);
    expect(reasons({ secret: "repo-cred" }, { credentialSecrets: ["other"] }, ["orka:secrets:credentials:read"])).toEqual([
      'credential_not_allowed: secret "other" is not the token context\'s secret',
    ]);
    expect(reasons({ secret: "repo-cred" }, { credentialSecrets: ["repo-cred"] })).toEqual([
      'missing_scope: scope "orka:secrets:credentials:read" is required to use credentials',
    ]);
    const replaced = taskGrantFailures(claims({ secret: "s" }, ["creds"]), facts({ credentialSecrets: ["s"] }), { "orka:secrets:credentials:read": ["creds"] });
    expect(replaced).toEqual([]);
  });
});
