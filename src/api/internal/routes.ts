import { basename } from "node:path";
import { z } from "zod";
import type { SecretSpec } from "../../resources/secret.ts";
import type { Resource } from "../../resources/meta.ts";
import type { TaskSpec, TaskStatus } from "../../resources/task.ts";
import type { ToolSpec, ToolStatus } from "../../resources/tool.ts";
import { parseWith } from "../../resources/validate.ts";
import { callHttpTool, validateArguments } from "../../tools/custom/http-tool.ts";
import { callMcpTool, mcpModelToolName } from "../../tools/custom/mcp-tool.ts";
import type { Attempt } from "../../store/data-store.ts";
import { stepOwnerOf, toolResultStep } from "../../store/journal-store.ts";
import { OrkaError, errorMessage } from "../../util/errors.ts";
import { redact } from "../../policy/redact.ts";
import { EVENT_LIMITS } from "../../store/data-store.ts";
import { eventBatchSchema, eventSchema } from "./execution-events.ts";
import { MAX_RESULT_BYTES, MAX_STEP_BYTES, refuseOversizedResult } from "./journal-routes.ts";
import { journalWriteSchema } from "./journal-write.ts";
import { authorizeWorker } from "../auth.ts";
import type { ApiContext } from "../context.ts";
import { authorizeToolUse } from "./tool-use.ts";
import { CREDENTIALS_SCOPE, GrantRefused } from "../../auth/grants.ts";
import { approvalGate } from "./approval-routes.ts";
import { internalCompatRoutes } from "./compat-routes.ts";
import { noContent, WORKER_API_PREFIX, type WorkerRequest, type WorkerRoute } from "./worker-route.ts";

const MAX_ARTIFACT_BYTES = 10 * 1024 * 1024;
const TOOLS_ROUTE = `${WORKER_API_PREFIX}/tools/:ns/:task/:name`;

const toolCallBody = z.strictObject({
  arguments: z.record(z.string(), z.unknown()).default({}),
  /** Where the call's result goes in the journal: the control plane writes that step with the call's reply. */
  resultStep: z.strictObject({ run: z.number().int().positive(), seq: z.number().int().positive(), toolCallId: z.string().min(1).max(EVENT_LIMITS.toolCallID) }).optional(),
  /** Journal steps the call acts on (the model's answer that asked for it), with the events since the worker's last write: written in the commit that starts the call. */
  journalFirst: journalWriteSchema.optional(),
});

/** /internal/v1: the worker's side of the control plane, every call checked against the attempt's token. */
export function internalRoutes(ctx: ApiContext): WorkerRoute[] {
  const attemptOf = (request: WorkerRequest) => authorizeWorker(ctx.data, request, request.params.ns, request.params.task);
  const bytesOf = (request: WorkerRequest) => (request.body as Buffer | undefined) ?? Buffer.alloc(0);

  async function answerToolCall(request: WorkerRequest, attempt: Attempt, args: Record<string, unknown>): Promise<{ result: string; parked?: boolean }> {
    const { ns, name } = request.params;
    const tool = await ctx.store.get<ToolSpec, unknown>("Tool", ns, name);
    const mcp = tool ? undefined : await mcpToolCalled(ctx, ns, name);
    if (mcp) return callMcpToolFor(ctx, attempt, mcp, args);
    const task = await authorizeToolUse(ctx, attempt, [name], TOOLS_ROUTE);
    if (!tool?.spec.http) throw new OrkaError("not_found", `tool "${name}" is not an HTTP Tool in namespace ${ns}`);
    let authValue: string | undefined;
    const ref = tool.spec.http.authSecretRef;
    if (ref) {
      const refused = credentialRefusal(ctx, task, ref.name);
      if (refused) return { result: JSON.stringify(refused) };
      const secret = await ctx.store.get<SecretSpec, unknown>("Secret", ns, ref.name);
      authValue = secret?.spec.data[ref.key];
      if (authValue === undefined) throw new OrkaError("invalid_argument", `tool "${name}": auth secret ${ref.name}/${ref.key} not found`);
    }
    const gate = await approvalGate(ctx, attempt, task, { tool }, args);
    if ("parked" in gate) return { result: gate.parked, parked: true };
    // What the Tool answers goes to the model and into events: an endpoint that echoes the credential must not leak it.
    const known = authValue ? [authValue] : [];
    try {
      // The ledger checked the key's form before this handler (effect-ledger.ts).
      const idempotencyKey = request.headers["idempotency-key"];
      const result = await callHttpTool({ spec: tool.spec.http, parameters: tool.spec.parameters, arguments: gate.run, authValue, egress: ctx.egress, idempotencyKey });
      return { result: ctx.secrets.redact(ns, attempt.task, result, known) };
    } catch (err) {
      throw new OrkaError("invalid_argument", redact(ctx.secrets.redact(ns, attempt.task, errorMessage(err), known)));
    }
  }

  return [
    ...internalCompatRoutes(ctx),
    {
      method: "POST",
      url: "/results/:ns/:task",
      bodyLimit: MAX_RESULT_BYTES + 1024,
      handle: (request) => {
        attemptOf(request);
        const body = bytesOf(request);
        if (body.length === 0) throw new OrkaError("invalid_argument", "empty request body");
        refuseOversizedResult(body.length);
        ctx.data.putResult(request.params.ns, request.params.task, body.toString("utf8"));
        return noContent();
      },
    },
    {
      method: "POST",
      url: "/artifacts/:ns/:task/:file",
      bodyLimit: MAX_ARTIFACT_BYTES + 1024,
      handle: (request) => {
        attemptOf(request);
        const file = basename(request.params.file);
        if (!file || file.startsWith(".")) throw new OrkaError("invalid_argument", "artifact file name is invalid");
        const body = bytesOf(request);
        if (body.length > MAX_ARTIFACT_BYTES) throw new OrkaError("payload_too_large", "artifact exceeds 10MB limit");
        ctx.data.putArtifact(request.params.ns, request.params.task, file, body);
        return noContent();
      },
    },
    {
      method: "POST",
      url: "/events/:ns/task/:task",
      handle: (request) => {
        attemptOf(request);
        // One event, or a batch of up to 500 in order.
        const events = parseWith(z.union([eventSchema, eventBatchSchema]), request.body);
        ctx.data.appendEvents(request.params.ns, request.params.task, [events].flat());
        return noContent();
      },
    },
    {
      method: "POST",
      url: "/tools/:ns/:task/:name",
      // The answer that asked for the call may come with it (a journal step, as large as one written alone).
      bodyLimit: MAX_STEP_BYTES,
      // Checked before the effect ledger records the call as started (the caller first): a refused call leaves nothing behind.
      check: (request) => {
        attemptOf(request);
        request.body = parsedToolCall(request);
      },
      journalFirst: (request) => (request.body as ToolCallBody).journalFirst,
      beforeEffect: (request) => checkResultPlace(ctx, request.body as ToolCallBody, attemptOf(request)),
      handle: async (request) => {
        const attempt = attemptOf(request);
        const { arguments: args, resultStep } = request.body as ToolCallBody;
        const answer = await answerToolCall(request, attempt, args);
        if (!resultStep || answer.parked) return answer;
        // Written with the reply the effect ledger records, in one commit (effect-ledger.ts): the worker does not write it.
        request.resultStep = { owner: stepOwnerOf(attempt), step: toolResultStep(resultStep, request.params.name, answer.result) };
        return { ...answer, journalled: true };
      },
    },
  ];
}

type ToolCallBody = z.infer<typeof toolCallBody>;

/** What of a tool call's body the ledger writes, and only for a new call: each needs an idempotency key. */
const JOURNAL_FIELDS = { resultStep: "asks for its result to be journalled", journalFirst: "carries journal steps" } as const;

function parsedToolCall(request: WorkerRequest): ToolCallBody {
  const body = parseWith(toolCallBody, request.body ?? {});
  if (typeof request.headers["idempotency-key"] === "string") return body;
  for (const [field, what] of Object.entries(JOURNAL_FIELDS)) {
    if (body[field as keyof typeof JOURNAL_FIELDS]) throw new OrkaError("invalid_argument", `a tool call that ${what} (${field}) must carry an Idempotency-Key header`);
  }
  return body;
}

/** A new call (not one the ledger answers from its record) whose result step would not be its run's next is refused before it starts. */
function checkResultPlace(ctx: ApiContext, body: ToolCallBody, attempt: Attempt): void {
  const place = body.resultStep;
  if (!place) return;
  ctx.journal.checkNextStep(attempt.taskUid, place.run, place.seq);
}

/** The MCP Tool and server tool a model tool name stands for, when it is no Tool's own name but one an MCP Tool's probe found. */
export async function mcpToolCalled(ctx: ApiContext, namespace: string, modelName: string) {
  const tools = await ctx.store.list<ToolSpec, ToolStatus>("Tool", { namespace });
  for (const tool of tools.items) {
    const found = tool.spec.mcp ? tool.status?.mcpTools?.find((t) => t.modelName === modelName) : undefined;
    if (found) return { tool, mcpTool: found.name, inputSchema: found.inputSchema };
  }
  return undefined;
}

/**
 * An MCP Tool's tool, called server side: allowed by the attempt under the name the model used, by a
 * grant under the Tool's name, through the approval gate, and behind the same egress guard as HTTP Tools.
 */
async function callMcpToolFor(
  ctx: ApiContext,
  attempt: Attempt,
  called: { tool: Resource<ToolSpec, ToolStatus>; mcpTool: string; inputSchema: Record<string, unknown> },
  args: Record<string, unknown>,
) {
  const { tool, mcpTool } = called;
  const modelName = mcpModelToolName(tool.metadata.name, mcpTool);
  const task = await authorizeToolUse(ctx, attempt, [modelName], TOOLS_ROUTE, tool.metadata.name);
  validateArguments(called.inputSchema, args);
  const gate = await approvalGate(ctx, attempt, task, { tool, serverTool: mcpTool }, args);
  if ("parked" in gate) return { result: gate.parked, parked: true };
  try {
    // The approval's idempotency key is Orka's; an MCP tool's schema does not take it, so the model's own arguments are sent.
    const result = await callMcpTool(tool.spec.mcp!, { egress: ctx.egress, stdio: ctx.mcpStdio }, mcpTool, args);
    return { result: ctx.secrets.redact(attempt.namespace, attempt.task, result, []) };
  } catch (err) {
    throw new OrkaError("invalid_argument", redact(ctx.secrets.redact(attempt.namespace, attempt.task, errorMessage(err), [])));
  }
}

/**
 * Credentials: a Task with a stamped transaction uses a Secret only with the credential scope, in the
 * token's namespace, and only the Secret named by `tctx.secret`; otherwise the model gets a structured error.
 */
function credentialRefusal(ctx: ApiContext, task: Resource<TaskSpec, TaskStatus>, secret: string) {
  const claims = task.spec.transaction;
  if (!claims) return undefined;
  try {
    ctx.grants.credentials(claims, "useCredential", task.metadata.namespace, [secret], {
      method: "TOOL", path: TOOLS_ROUTE, principal: task.metadata.name, namespace: task.metadata.namespace,
    });
    return undefined;
  } catch (err) {
    if (!(err instanceof GrantRefused)) throw err;
    return {
      errorType: "authorization_failed",
      error: "this task's transaction does not allow using this tool's credentials",
      suggestion: `the transaction token needs the ${CREDENTIALS_SCOPE} scope and tctx.secret naming the credential's Secret`,
    };
  }
}

