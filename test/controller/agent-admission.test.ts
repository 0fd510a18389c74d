import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { GrantGate } from "../../src/auth/grant-gate.ts";
import { admit } from "../../src/controller/admission.ts";
import { defaultTimeoutNote } from "../../src/controller/task/timeout.ts";
import { toolDefinition } from "../../src/tools/define.ts";
import { builtinTool } from "../../src/tools/registry.ts";
import type { Resource } from "../../src/resources/meta.ts";
import type { ToolSpec, ToolStatus } from "../../src/resources/tool.ts";
import type { Task, TaskSpec, TaskStatus } from "../../src/resources/task.ts";
import { customToolDigest } from "../../src/runtimes/tool-digest.ts";
import type { RunningOrka } from "../../src/server.ts";
import { SqliteAuditStore } from "../../src/store/sqlite/audit-store.ts";
import { createLogger } from "../../src/util/logger.ts";
import { EMBEDDED_ADMIN_TOKEN, startEmbeddedOrka } from "../helpers/embedded.ts";
import { tempStore } from "../helpers/store.ts";

const PROVIDER_KEY = "sk-ant-admission-secret-0123456789";

/** A coding-agent Agent on claude with its Anthropic Provider; `spec` replaces fields. */
const agentSpec = (spec: Record<string, unknown> = {}) => ({
  model: { provider: "anthropic-api", name: "claude-sonnet-4-5" },
  runtime: { type: "claude", defaultAllowedTools: ["Read", "Grep", "web_fetch"] },
  ...spec,
});

const RESOURCES: [string, Record<string, unknown>][] = [
  ["secrets", { metadata: { name: "anthropic-key" }, stringData: { "api-key": PROVIDER_KEY } }],
  ["providers", { metadata: { name: "anthropic-api" }, spec: { type: "anthropic", baseURL: "http://127.0.0.1:9", secretRef: { name: "anthropic-key", key: "api-key" } } }],
  ["providers", { metadata: { name: "openai-api" }, spec: { type: "openai", baseURL: "http://127.0.0.1:9", secretRef: { name: "anthropic-key", key: "api-key" } } }],
  ["tools", { metadata: { name: "lookup" }, spec: { description: "Look a thing up", http: { url: "https://tools.example.com/lookup" } } }],
  ["tools", { metadata: { name: "ledger" }, spec: { description: "Post to the ledger", brokeredToolClass: "write", parameters: { type: "object", properties: { entry: { type: "string" } } }, http: { url: "https://tools.example.com/ledger" } } }],
  ["agents", { metadata: { name: "coder" }, spec: agentSpec() }],
  ["agents", { metadata: { name: "wrong-provider" }, spec: agentSpec({ model: { provider: "openai-api", name: "gpt-5" } }) }],
  ["agents", { metadata: { name: "no-model" }, spec: agentSpec({ model: { provider: "anthropic-api" } }) }],
  ["agents", { metadata: { name: "no-provider" }, spec: agentSpec({ model: { name: "claude-sonnet-4-5" } }) }],
  ["agents", { metadata: { name: "external" }, spec: agentSpec({ runtime: { runtimeRef: { name: "acp-pool" } } }) }],
  ["agents", { metadata: { name: "codex-writer" }, spec: agentSpec({ model: { provider: "openai-api", name: "gpt-5" }, runtime: { type: "codex", defaultAllowedTools: ["Read", "Write"] } }) }],
  [
    "agents",
    {
      metadata: { name: "approver" },
      spec: agentSpec({ coordination: { enabled: true, autonomous: true, approvalRequiredTools: ["ledger"] }, runtime: { type: "claude", defaultAllowedTools: ["ledger"] } }),
    },
  ],
];

describe("admission of coding-agent Tasks (embedded server)", () => {
  let orka: RunningOrka;
  const api = (method: string, path: string, body?: unknown) =>
    fetch(`${orka.url}/api/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${EMBEDDED_ADMIN_TOKEN}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  const created = async (path: string, body: unknown) => {
    const response = await api("POST", path, body);
    if (response.status !== 201) throw new Error(`${path}: ${response.status} ${await response.text()}`);
  };
  const statusOf = async (name: string) => (await orka.store.get<TaskSpec, TaskStatus>("Task", "default", name))?.status;
  const settled = async (name: string) => {
    for (let i = 0; i < 150; i++) {
      const status = await statusOf(name);
      if (status?.phase && status.phase !== "Pending") return status;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`task ${name} stayed Pending`);
  };
  const agentTask = (name: string, agent: string, spec: Record<string, unknown> = {}) => created("/tasks", { metadata: { name }, spec: { type: "agent", agentRef: { name: agent }, prompt: "Summarize the README", ...spec } });

  beforeAll(async () => {
    // A valid Task starts a session: its CLI is a stand-in that exits at once, never the pinned CLI from the registry.
    orka = await startEmbeddedOrka({}, { ORKA_RUNTIME_COMMAND_CLAUDE: JSON.stringify([process.execPath, "-e", "process.exit(3)"]) });
    for (const [path, body] of RESOURCES) await created(`/${path}`, body);
  });
  afterAll(() => orka?.close());

  const refusals: { rule: string; agent: string; spec?: Record<string, unknown>; message: RegExp }[] = [
    { rule: "code_exec runs only in an ai worker", agent: "coder", spec: { agentRuntime: { allowedTools: ["Read", "code_exec"] } }, message: /^the claude session cannot have the tools it is given: "code_exec" runs only in an ai Task's own worker process/ },
    { rule: "an unknown name is named", agent: "coder", spec: { agentRuntime: { allowedTools: ["Read", "telepathy"] } }, message: /"telepathy" is neither a tool of the claude CLI .* fix or remove it in allowedTools$/ },
    { rule: "a custom Tool without brokeredToolClass", agent: "coder", spec: { agentRuntime: { allowedTools: ["lookup"] } }, message: /Tool "lookup" has no spec\.brokeredToolClass: set it to read, write or coordination/ },
    { rule: "runtimeRef is unsupported", agent: "external", message: /^RuntimeRefUnsupported: agent "external" names runtime\.runtimeRef "acp-pool".*set runtime\.type to claude, codex, copilot or opencode/ },
    { rule: "the Provider must speak the runtime's API", agent: "wrong-provider", message: /^the claude runtime needs a Provider of type anthropic .* provider openai-api is of type openai: point the Agent's model\.provider at a anthropic Provider$/ },
    { rule: "the model must be pinned", agent: "no-model", message: /^agent "no-model" pins no model: set the Agent's model\.name/ },
    { rule: "the Provider must be named", agent: "no-provider", message: /^agent "no-provider" names no Provider: set the Agent's model\.provider to a Provider of type anthropic/ },
    { rule: "a brokered tool that needs approval", agent: "approver", message: /no approval channel.*\(ledger\): remove it from the Agent's coordination\.approvalRequiredTools/ },
    { rule: "a policy the CLI cannot enforce exactly", agent: "codex-writer", message: /^the codex runtime cannot enforce this Task's policy exactly: codex can enforce only/ },
  ];
  it.each(refusals.map((row, i) => ({ ...row, name: `refused-${i}` })))("fails before any attempt: $rule", async ({ name, agent, spec, message }) => {
    await agentTask(name, agent, spec);
    const status = await settled(name);
    expect(status.phase).toBe("Failed");
    expect(status.message).toMatch(message);
    expect(status.message).not.toContain(PROVIDER_KEY);
    expect(orka.data.latestAttempt("default", name)).toBeUndefined();
  });

  it("starts a valid one with the brokered tools as the attempt's allowed tools", async () => {
    await agentTask("valid", "coder", { agentRuntime: { allowedTools: ["Read", "web_fetch", "ledger"] } });
    const status = await settled("valid");
    expect(orka.data.latestAttempt("default", "valid")?.allowedTools).toEqual(["ledger", "web_fetch"]);
    expect(status.attempts).toBe(1);
  });

  it("refuses at apply an Agent with runtime and secretRef, and a coding-agent Task with a prior Task, saying why", async () => {
    const agent = await api("POST", "/agents", { metadata: { name: "keyed" }, spec: agentSpec({ secretRef: { name: "anthropic-key" } }) });
    expect(agent.status).toBe(400);
    expect(await agent.text()).toContain("an Agent with runtime takes its key from the Provider named by model.provider, never from secretRef");
    const task = await api("POST", "/tasks", { metadata: { name: "continued" }, spec: { type: "agent", agentRef: { name: "coder" }, prompt: "go on", priorTaskRef: { name: "valid" } } });
    expect(task.status).toBe(400);
    expect(await task.text()).toContain("built-in coding-agent runtimes do not accept a prior Task: remove priorTaskRef");
    expect(await orka.store.get("Agent", "default", "keyed")).toBeUndefined();
    // A name goes into CLI arguments and config files: a line break could start a config section of its own.
    const smuggled = await api("POST", "/agents", { metadata: { name: "smuggler" }, spec: agentSpec({ runtime: { type: "codex", defaultAllowedTools: ['Read"\n[mcp_servers.evil]\ncommand = "sh'] } }) });
    expect(smuggled.status).toBe(400);
    expect(await smuggled.text()).toContain("a tool name is one line without control characters");
    const smuggledTask = await api("POST", "/tasks", { metadata: { name: "smuggled" }, spec: { type: "agent", agentRef: { name: "coder" }, prompt: "x", agentRuntime: { disallowedTools: ["Bash\u0000"] } } });
    expect(smuggledTask.status).toBe(400);
    expect(await smuggledTask.text()).toContain("a tool name is one line without control characters");
  });

  it("keeps an empty tool list apart from an absent one, through the API and the store", async () => {
    await created("/agents", { metadata: { name: "deny-all" }, spec: agentSpec({ runtime: { type: "claude", defaultAllowedTools: [] } }) });
    await created("/agents", { metadata: { name: "defaults" }, spec: agentSpec({ runtime: { type: "claude" } }) });
    const runtimeOf = async (name: string) => ((await (await api("GET", `/agents/${name}`)).json()) as { spec: { runtime: Record<string, unknown> } }).spec.runtime;
    expect(await runtimeOf("deny-all")).toEqual({ type: "claude", defaultAllowedTools: [], defaultMaxTurns: 50 });
    expect(await runtimeOf("defaults")).toEqual({ type: "claude", defaultMaxTurns: 50 });
    await agentTask("empty-list", "defaults", { agentRuntime: { allowedTools: [] } });
    expect((await orka.store.get<TaskSpec, TaskStatus>("Task", "default", "empty-list"))?.spec.agentRuntime).toEqual({ allowedTools: [] });
  });
});

describe("the AgentRun of an admitted coding-agent Task (real store)", () => {
  let store: ReturnType<typeof tempStore>;
  let ledger: Resource<ToolSpec, ToolStatus>;
  const create = (kind: string, name: string, spec: unknown, metadata: Record<string, unknown> = {}) =>
    store.resources.create({ apiVersion: kind === "Secret" ? "v1" : "core.orka.ai/v1alpha1", kind, metadata: { name, namespace: "default", ...metadata }, spec } as Resource<unknown, unknown>);
  /** A delegated child's coding Task (so Orka adds send_message and check_messages), with what `spec` adds. */
  const childTask = async (name: string, spec: Partial<TaskSpec> = {}) =>
    (await create("Task", name, { type: "agent", agentRef: { name: "coder" }, prompt: "Fix the bug", priority: 500, workspace: { intent: "read" }, ...spec }, { labels: { "orka.ai/parent-task": "lead" } })) as Task;
  const admitNow = (task: Task, mode: "off" | "enforce" = "off") =>
    admit(store.resources, task, {
      grants: new GrantGate({ mode, scopeOverrides: {} }, new SqliteAuditStore(store.db, { maxAgeMs: 60_000, maxRows: 100 }), createLogger("silent")),
      providers: {},
      runtimeCommands: { claude: ["node", "/opt/fake-claude.mjs"] },
      runtimeCacheDir: "/var/cache/orka-runtimes",
      runtimeReadPaths: ["/opt/fake-claude-modules"],
    });

  beforeEach(async () => {
    store = tempStore();
    await create("Secret", "anthropic-key", { data: { "api-key": PROVIDER_KEY } });
    await create("Provider", "anthropic-api", { type: "anthropic", baseURL: "http://127.0.0.1:9", secretRef: { name: "anthropic-key", key: "api-key" } });
    ledger = (await create("Tool", "ledger", { description: "Post to the ledger", enabled: true, brokeredToolClass: "write", parameters: { type: "object", properties: {} }, http: { url: "https://tools.example.com/ledger" } })) as Resource<ToolSpec, ToolStatus>;
    await create("Agent", "coder", {
      ...agentSpec(),
      systemPrompt: { inline: "Be brief." },
      runtime: { type: "claude", defaultMaxTurns: 12, defaultAllowedTools: ["Read", "Bash(git:*)", "web_fetch", "ledger"], defaultAllowBash: false, defaultReasoningEffort: "high" },
    });
  });
  afterEach(() => store.close());

  it("reads the Provider's Secret once per admission, for its readiness and for its key, and again at the next", async () => {
    await create("Agent", "writer", { providerRef: { name: "anthropic-api" }, model: { name: "claude-sonnet-4-5" }, systemPrompt: { inline: "Be brief." } });
    const reads = vi.spyOn(store.resources, "get");
    const secretReads = () => reads.mock.calls.filter(([kind]) => kind === "Secret").length;
    const keyOf = (admission: Awaited<ReturnType<typeof admitNow>>) => (admission.kind === "admit" ? (admission.plan.agent?.endpoint ?? admission.plan.ai?.endpoint)?.apiKey : admission);
    expect(keyOf(await admitNow(await childTask("coding")))).toBe(PROVIDER_KEY);
    expect(secretReads()).toBe(1);
    const written = await store.resources.get<{ data: Record<string, string> }, unknown>("Secret", "default", "anthropic-key");
    await store.resources.update({ ...written!, spec: { data: { "api-key": "sk-ant-rotated" } } });
    reads.mockClear();
    const aiTask = (await create("Task", "writing", { type: "ai", agentRef: { name: "writer" }, prompt: "Write" })) as Task;
    expect(keyOf(await admitNow(aiTask))).toBe("sk-ant-rotated");
    expect(secretReads()).toBe(1);
  });

  it("carries the runtime, the operator's command, the Provider with its key and pinned model, the policy and the brokered tools", async () => {
    const admission = await admitNow(await childTask("coding"));
    if (admission.kind !== "admit") throw new Error(JSON.stringify(admission));
    const webFetch = toolDefinition(builtinTool("web_fetch")!);
    expect(admission.plan.ai).toBeUndefined();
    expect(admission.plan.agent).toEqual({
      runtime: "claude",
      command: ["node", "/opt/fake-claude.mjs"],
      cliCacheDir: "/var/cache/orka-runtimes",
      readPaths: ["/opt/fake-claude-modules"],
      endpoint: expect.objectContaining({ name: "anthropic-api", type: "anthropic", model: "claude-sonnet-4-5", baseURL: "http://127.0.0.1:9", apiKey: PROVIDER_KEY }),
      prompt: "Fix the bug",
      policy: {
        nativeTools: ["Read"],
        disallowedTools: [],
        allowBash: false,
        maxTurns: 12,
        brokeredTools: ["send_message", "check_messages", "ledger", "web_fetch"],
        intent: "read",
        systemPrompt: "Be brief.",
        reasoningEffort: "high",
        model: "claude-sonnet-4-5",
        modelLimits: undefined,
      },
      brokered: [
        expect.objectContaining({ name: "send_message", effect: "consequential" }),
        expect.objectContaining({ name: "check_messages", effect: "consequential" }),
        { name: "ledger", description: "Post to the ledger", inputSchema: { type: "object", properties: {} }, effect: "consequential", digest: customToolDigest(ledger) },
        { name: "web_fetch", description: webFetch.description, inputSchema: webFetch.parameters, effect: "read_only" },
      ],
    });
  });

  it("needs the Task's transaction grant to cover the tools Orka adds and the session's Provider", async () => {
    const transaction = (context: Record<string, string>): TaskSpec["transaction"] => ({
      profile: "transaction-token", id: "txn-1", issuer: "https://issuer", audience: "orka", subject: "alice", requestingWorkload: "ci",
      scope: "orka:tasks:create", scopes: ["orka:tasks:create"], contextDigest: "sha256:x", context,
    });
    const everyTool = '["Read","web_fetch","ledger","send_message","check_messages"]';
    expect((await admitNow(await childTask("granted", { transaction: transaction({ allowedTools: everyTool }) }), "enforce")).kind).toBe("admit");
    const withoutMessaging = await admitNow(await childTask("no-messaging", { transaction: transaction({ allowedTools: '["Read","web_fetch","ledger"]' }) }), "enforce");
    expect(withoutMessaging).toEqual({ kind: "fail", message: expect.stringContaining('child task tool "send_message" is not allowed by transaction context') });
    const otherProvider = await admitNow(await childTask("other-provider", { transaction: transaction({ allowedTools: everyTool, allowedProviders: '["openai-api"]' }) }), "enforce");
    expect(otherProvider).toEqual({ kind: "fail", message: expect.stringContaining('provider "anthropic-api" is not allowed by token context') });
  });
});

describe("a coding-agent Task's default time limit", () => {
  const task = (spec: Partial<TaskSpec>) => ({ apiVersion: "core.orka.ai/v1alpha1", kind: "Task", metadata: { name: "t", namespace: "default" }, spec: { priority: 500, ...spec } }) as Task;

  it("is said in its status when the Task sets none, and only then", () => {
    expect(defaultTimeoutNote(task({ type: "agent" }))).toBe("times out 30m after its creation, the default for type: agent (set spec.timeout to change it)");
    expect(defaultTimeoutNote(task({ type: "agent", timeout: "5m" }))).toBeUndefined();
    expect(defaultTimeoutNote(task({ type: "ai", prompt: "x" }))).toBeUndefined();
  });
});
