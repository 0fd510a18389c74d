import { z } from "zod";
import { createProposal, proposalInputSchema, stringList } from "../../memory/rules.ts";
import { parseWith } from "../../resources/validate.ts";
import { OrkaError } from "../../util/errors.ts";
import { authorizeWorkerInNamespace } from "../auth.ts";
import type { ApiContext } from "../context.ts";
import { authorizeToolUse } from "./tool-use.ts";
import { created, type WorkerRequest, type WorkerRoute } from "./worker-route.ts";

const intText = (name: string, fallback: number, max: number) =>
  z.coerce.number({ message: `${name} must be a number` }).int().min(0, `${name} must be non-negative`).default(fallback).transform((n) => Math.min(n === 0 ? fallback : n, max));
const boolText = z.enum(["true", "false"]).default("false").transform((v) => v === "true");

const recallQuery = z.object({
  query: z.string().optional(),
  tags: stringList.optional(),
  taskName: z.string().optional(),
  agentName: z.string().optional(),
  source: z.string().optional(),
  limit: intText("limit", 50, 200),
  includeDisabled: boolText,
});

const searchQuery = z.object({
  query: z.string().trim().min(1, "query is required"),
  sessionName: z.string().optional(),
  excludeSessionName: z.string().optional(),
  roles: stringList.optional(),
  limit: intText("limit", 10, 50),
  maxSnippetLength: intText("maxSnippetLength", 360, 1000),
});

const transcriptMessage = z.object({ role: z.enum(["user", "assistant", "tool", "system"]), name: z.string().max(200).optional(), content: z.string().max(1024 * 1024) });

/** Memory and transcripts for workers: read memories, propose, search — never review or apply. */
export function internalMemoryRoutes(ctx: ApiContext): WorkerRoute[] {
  const attemptOf = (request: WorkerRequest) => authorizeWorkerInNamespace(ctx.data, request, request.params.ns);
  /** Reached through one of `tools`; holding any one is enough. */
  const toolAttempt = async (request: WorkerRequest, tools: readonly string[]) => {
    const attempt = attemptOf(request);
    await authorizeToolUse(ctx, attempt, tools, request.route);
    return attempt;
  };

  return [
    {
      method: "GET",
      url: "/memories/:ns",
      handle: async (request) => {
        await toolAttempt(request, ["recall_memory"]);
        return ctx.memory.recall(request.params.ns, parseWith(recallQuery, request.query));
      },
    },

    {
      method: "POST",
      url: "/memory-proposals/:ns",
      handle: async (request) => {
        const attempt = await toolAttempt(request, ["propose_memory", "remember"]);
        const body = (request.body ?? {}) as { namespace?: string };
        if (body.namespace !== undefined && body.namespace !== request.params.ns) throw new OrkaError("invalid_argument", "memory proposal namespace mismatch");
        // The Task is the attempt's own; review fields (status, reviewer…) are not part of the schema and are dropped.
        const input = parseWith(proposalInputSchema, { ...body, taskName: attempt.task });
        return created(createProposal(ctx.memory, request.params.ns, input));
      },
    },

    {
      method: "GET",
      url: "/sessions/:ns/search",
      handle: async (request) => {
        await toolAttempt(request, ["search_transcript"]);
        return ctx.memory.searchTranscripts(request.params.ns, parseWith(searchQuery, request.query));
      },
    },

    {
      method: "GET",
      url: "/sessions/:ns/:session/messages",
      handle: async (request) => {
        attemptOf(request);
        const { limit } = parseWith(z.object({ limit: intText("limit", 50, 1000) }), request.query);
        return ctx.memory.transcript(request.params.ns, request.params.session, limit);
      },
    },

    {
      method: "POST",
      url: "/sessions/:ns/:session/messages",
      handle: async (request) => {
        const attempt = attemptOf(request);
        const session = await ctx.store.get("Task", attempt.namespace, attempt.task);
        if ((session?.spec as { sessionRef?: { name?: string } } | undefined)?.sessionRef?.name !== request.params.session) {
          throw new OrkaError("permission_denied", `task ${attempt.task} does not own session ${request.params.session}`);
        }
        const message = parseWith(transcriptMessage, request.body ?? {});
        return created(ctx.memory.appendTranscript(request.params.ns, request.params.session, { ...message, taskName: attempt.task }));
      },
    },
  ];
}
