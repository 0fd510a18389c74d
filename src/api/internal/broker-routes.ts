import { z } from "zod";
import { MAX_BROKERED_RESULT_BYTES } from "../../mcp/calls.ts";
import type { Resource } from "../../resources/meta.ts";
import type { TaskSpec, TaskStatus } from "../../resources/task.ts";
import type { ToolSpec, ToolStatus } from "../../resources/tool.ts";
import { parseWith } from "../../resources/validate.ts";
import { customToolDigest } from "../../runtimes/tool-digest.ts";
import type { Attempt, SessionTool } from "../../store/data-store.ts";
import { OrkaError } from "../../util/errors.ts";
import { canonicalDigest, sha256Hex } from "../../util/hash.ts";
import { attemptOfToken } from "../auth.ts";
import type { ApiContext } from "../context.ts";
import { coordinationOf } from "./approval-routes.ts";
import { mcpToolCalled } from "./routes.ts";
import { noContent, WORKER_API_PREFIX, type WorkerRequest, type WorkerRoute } from "./worker-route.ts";

const CALLS_PATH = `${WORKER_API_PREFIX}/broker/:ns/:task/calls`;

const callSchema = z.strictObject({
  tool: z.string().min(1, "tool is required").max(256),
  callId: z.string().min(1, "callId is required").max(256, "callId is at most 256 characters").regex(/^\S+$/, "callId may not contain whitespace"),
  arguments: z.record(z.string(), z.unknown(), { message: "arguments must be a JSON object" }),
});

const resultSchema = z.strictObject({ text: z.string(), isError: z.boolean() });

/** What a brokered call's result was recorded as, and what a replay gives back. */
type RecordedResult = z.infer<typeof resultSchema>;

/**
 * /internal/v1/broker: the control plane's half of a coding-agent session's MCP broker. The worker asks
 * before every `tools/call` whether it may run it (session and Task state, allowlist, custom Tool digest,
 * approvals, grant), which reserves a consequential call in the effect ledger or answers its recorded
 * result; it reports the result afterwards, which commits it only while the Task still runs. A refusal is
 * a 403 that says which check failed, and changes nothing.
 */
export function internalBrokerRoutes(ctx: ApiContext): WorkerRoute[] {
  return [
    {
      method: "POST",
      url: "/broker/:ns/:task/calls",
      handle: async (request) => {
        const { attempt, task } = await runningSession(ctx, request);
        const call = parseWith(callSchema, request.body ?? {});
        const sessionTool = allowedInSession(attempt, call.tool);
        const custom = await unchangedCustomTool(ctx, attempt.namespace, sessionTool);
        const grantedAs = custom?.metadata.name ?? call.tool;
        const approvalRequired = (await coordinationOf(ctx, task))?.approvalRequiredTools ?? [];
        if (approvalRequired.includes(call.tool) || approvalRequired.includes(grantedAs)) {
          throw refused(`tool ${call.tool} requires approval, which coding-agent sessions cannot ask for`);
        }
        if (task.spec.transaction) ctx.grants.toolCall(task.spec.transaction, grantedAs, { method: "TOOL", path: CALLS_PATH, principal: attempt.task, namespace: attempt.namespace });

        const operationId = sha256Hex(`${attempt.id}:${attempt.taskUid}:${attempt.number}:${call.callId}`);
        if (sessionTool.effect === "read_only") return { operationId };
        const replay = reserve(ctx, attempt, call, operationId);
        return replay ? { operationId, replay } : { operationId };
      },
    },

    // JSON escapes a control character as six bytes: the body may be that much larger than the text it carries.
    {
      method: "POST",
      url: "/broker/:ns/:task/calls/:operationId/result",
      bodyLimit: 6 * MAX_BROKERED_RESULT_BYTES + 1024,
      handle: async (request) => {
        const { attempt } = await runningSession(ctx, request);
        const { operationId } = request.params;
        if (!/^[0-9a-f]{64}$/.test(operationId)) throw new OrkaError("invalid_argument", "operationId must be the 64 hex characters the call was answered with");
        // The body was scrubbed of the Task's Secret values before this handler: a replay gives back the scrubbed text.
        const result = parseWith(resultSchema, request.body ?? {});
        const bytes = Buffer.byteLength(result.text, "utf8");
        if (bytes > MAX_BROKERED_RESULT_BYTES) throw new OrkaError("payload_too_large", `the result is ${bytes} bytes; a brokered call's result is at most ${MAX_BROKERED_RESULT_BYTES} bytes`);
        const key = ledgerKey(attempt, operationId);
        if (ctx.journal.effect(key)?.state === "started") ctx.journal.finishEffect(key, JSON.stringify(result));
        return noContent();
      },
    },
  ];
}

const refused = (message: string) => new OrkaError("permission_denied", message);

/**
 * The attempt of the session and its Task, while the Task runs: the token names a running attempt of
 * this Task, and the Task is the same one (its UID), `Running` and not being deleted. A token that is no
 * worker's is unauthenticated, like on every internal route; anything else is a refusal.
 */
async function runningSession(ctx: ApiContext, request: WorkerRequest) {
  const { ns, task: name } = request.params;
  const attempt = attemptOfToken(ctx.data, request);
  if (!attempt) throw new OrkaError("unauthenticated", "invalid token");
  if (attempt.namespace !== ns || attempt.task !== name) throw refused(`the session's token is not valid for task ${ns}/${name}`);
  if (attempt.state !== "running") throw refused("the task is not running: the session's attempt has ended");
  const task = await ctx.store.get<TaskSpec, TaskStatus>("Task", ns, name);
  if (!task || task.metadata.uid !== attempt.taskUid) throw refused("the task is not running: it no longer exists");
  if (task.metadata.deletionTimestamp) throw refused("the task is not running: it is being deleted");
  if (task.status?.phase !== "Running") throw refused(`the task is not running: it is ${task.status?.phase ?? "Pending"}`);
  return { attempt, task };
}

/** The tool as frozen for the session, when the attempt was given it; a session whose tools were not frozen allows none. */
function allowedInSession(attempt: Attempt, tool: string): SessionTool {
  const frozen = attempt.allowedTools.includes(tool) ? attempt.sessionTools?.find((t) => t.name === tool) : undefined;
  if (!frozen) throw refused(`tool "${tool}" is not allowed in this session`);
  return frozen;
}

/**
 * A custom Tool of the session, as it is now, when it is still what the session froze: the Tool of that
 * name, or the MCP Tool whose probe offered it. Undefined for a built-in tool.
 */
async function unchangedCustomTool(ctx: ApiContext, namespace: string, frozen: SessionTool): Promise<Resource<ToolSpec, ToolStatus> | undefined> {
  if (!frozen.digest) return undefined;
  const tool = (await ctx.store.get<ToolSpec, ToolStatus>("Tool", namespace, frozen.name)) ?? (await mcpToolCalled(ctx, namespace, frozen.name))?.tool;
  if (!tool || customToolDigest(tool) !== frozen.digest) throw refused(`custom Tool ${frozen.name} changed since the session started`);
  return tool;
}

/**
 * A consequential call in the ledger: a new call id is reserved (started, with the digest of its tool and
 * arguments) and answers nothing; a known one answers its recorded result, or its unknown outcome when it
 * started and never committed; a known one with other arguments is refused.
 */
function reserve(ctx: ApiContext, attempt: Attempt, call: z.infer<typeof callSchema>, operationId: string): RecordedResult | undefined {
  const key = ledgerKey(attempt, operationId);
  const payloadDigest = canonicalDigest({ tool: call.tool, arguments: call.arguments });
  const reserved = ctx.journal.effect(key);
  if (!reserved) {
    ctx.journal.beginEffect({ namespace: attempt.namespace, task: attempt.task }, key, call.tool, payloadDigest);
    return undefined;
  }
  if (reserved.payloadDigest !== payloadDigest) throw refused(`call id ${call.callId} was already used with other arguments`);
  if (reserved.state === "done" && reserved.result) return JSON.parse(reserved.result) as RecordedResult;
  return { text: outcomeUnknown(call.tool, call.callId), isError: true };
}

/** Scoped by the attempt the caller's token names, so one attempt can never settle another's call. */
const ledgerKey = (attempt: Attempt, operationId: string) => `broker:${attempt.id}:${operationId}`;

const outcomeUnknown = (tool: string, callId: string) =>
  `tool_execution_outcome_unknown: call ${callId} of ${tool} started but its result was never recorded (the worker or the control plane stopped mid-call), so it may or may not have taken effect. It was not run again; check its effects before repeating it.`;
