import { z } from "zod";
import { stringList, titleFromContent } from "../../memory/rules.ts";
import { codeOf, errorMessage, OrkaError } from "../../util/errors.ts";
import { defineTool } from "../define.ts";

const nonNegative = (name: string) => z.number({ message: `${name} must be a number` }).int().min(0, `${name} must be non-negative`);

/** Compact JSON, `[]` when empty. */
const compact = (value: unknown) => JSON.stringify(value ?? []);

/** Every call is made as this attempt: the namespace and Task come from it, never from arguments. */
async function call<T>(action: string, request: () => Promise<T>): Promise<T> {
  try {
    return await request();
  } catch (err) {
    throw new OrkaError(codeOf(err, "unavailable"), `failed to ${action}: ${errorMessage(err)}`);
  }
}

export const recallMemory = defineTool({
  name: "recall_memory",
  readOnly: true,
  family: "memory",
  description: "Recall durable, reviewed memories of this namespace (newest first, best matches first with a query).",
  parameters: z.object({
    query: z.string().optional().describe("Words to look for in content or tags: every word counts, rarer words weigh more; quote a phrase to require it exactly"),
    tags: stringList.optional().describe("Tags that must all be present"),
    task_name: z.string().optional(),
    agent_name: z.string().optional(),
    source: z.string().optional(),
    limit: nonNegative("limit").default(0).describe("Default 50, at most 200"),
    include_disabled: z.boolean().default(false),
  }),
  aliases: { taskName: "task_name", agentName: "agent_name", includeDisabled: "include_disabled" },
  async run(args, ctx) {
    const memories = await call("recall memory", () =>
      ctx.controlPlane.get(`memories/${ctx.namespace}`, {
        query: args.query,
        tags: args.tags?.join(","),
        taskName: args.task_name,
        agentName: args.agent_name,
        source: args.source,
        limit: String(args.limit === 0 ? 50 : Math.min(args.limit, 200)),
        includeDisabled: String(args.include_disabled),
      }),
    );
    return compact(memories);
  },
});

export const remember = defineTool({
  name: "remember",
  family: "memory",
  description: "Submit a durable memory proposal; a person reviews it before it becomes memory.",
  parameters: z.object({
    content: z.string().describe("The fact to remember"),
    title: z.string().optional(),
    description: z.string().optional(),
    tags: stringList.optional(),
    agent_name: z.string().optional(),
  }),
  aliases: { agentName: "agent_name" },
  async run(args, ctx) {
    if (!args.content.trim()) throw new OrkaError("invalid_argument", "content is required");
    const description = [args.description, args.tags?.length ? `Tags: ${args.tags.join(", ")}` : undefined].filter(Boolean).join("\n");
    const proposal = await call("remember", () =>
      ctx.controlPlane.post(`memory-proposals/${ctx.namespace}`, {
        type: "memory",
        title: args.title?.trim() || titleFromContent(args.content),
        description: description || undefined,
        content: args.content,
        agentName: args.agent_name ?? ctx.agentName,
      }),
    );
    return compact(proposal);
  },
});

export const proposeMemory = defineTool({
  name: "propose_memory",
  family: "memory",
  description: "Submit a memory-adjacent governance proposal (skill, policy, workflow or memory) for review.",
  parameters: z.object({
    title: z.string(),
    type: z.string().default("skill").describe("memory, skill, policy or workflow"),
    skill_name: z.string().optional(),
    description: z.string().optional(),
    content: z.string().optional(),
    patch: z.string().optional().describe("A diff against the existing text"),
    agent_name: z.string().optional(),
  }),
  aliases: { skillName: "skill_name", agentName: "agent_name" },
  async run(args, ctx) {
    if (!args.title.trim()) throw new OrkaError("invalid_argument", "title is required");
    const proposal = await call("propose memory", () =>
      ctx.controlPlane.post(`memory-proposals/${ctx.namespace}`, {
        type: args.type,
        title: args.title,
        skillName: args.skill_name,
        description: args.description,
        content: args.content,
        patch: args.patch,
        agentName: args.agent_name ?? ctx.agentName,
      }),
    );
    return compact(proposal);
  },
});

export const searchTranscript = defineTool({
  name: "search_transcript",
  readOnly: true,
  family: "memory",
  description: "Search earlier session transcripts of this namespace, best matches first: every word counts, rarer words weigh more, quotes require an exact phrase.",
  parameters: z.object({
    query: z.string(),
    session_name: z.string().optional(),
    exclude_session_name: z.string().optional().describe("Defaults to the current session"),
    roles: stringList.optional().describe("user, assistant, tool or system"),
    limit: nonNegative("limit").default(0).describe("Default 10, at most 50"),
    max_snippet_length: nonNegative("max_snippet_length").default(0).describe("Default 360, at most 1000"),
  }),
  aliases: { sessionName: "session_name", excludeSessionName: "exclude_session_name", maxSnippetLength: "max_snippet_length" },
  async run(args, ctx) {
    if (!args.query.trim()) throw new OrkaError("invalid_argument", "query is required");
    const results = await call("search transcript", () =>
      ctx.controlPlane.get(`sessions/${ctx.namespace}/search`, {
        query: args.query,
        sessionName: args.session_name,
        excludeSessionName: args.exclude_session_name ?? ctx.sessionName ?? ctx.taskName,
        roles: args.roles?.join(","),
        limit: String(args.limit === 0 ? 10 : Math.min(args.limit, 50)),
        maxSnippetLength: String(args.max_snippet_length === 0 ? 360 : Math.min(args.max_snippet_length, 1000)),
      }),
    );
    return compact(results);
  },
});

export const MEMORY_TOOL_DECLARATIONS = [recallMemory, remember, proposeMemory, searchTranscript];
