import { codeExec } from "./core/code-exec.ts";
import { fileRead } from "./core/file-read.ts";
import { fileWrite } from "./core/file-write.ts";
import { webFetch } from "./core/web-fetch.ts";
import { webSearch } from "./core/web-search.ts";
import { MEMORY_TOOL_DECLARATIONS } from "./memory/memory-tools.ts";
import { COORDINATION_TOOL_DECLARATIONS, requestApproval } from "./coordination/coordination-tools.ts";
import { CHAT_TOOL_DECLARATIONS } from "./chat/create-pr-monitor.ts";
import type { BuiltinTool, ToolFamily } from "./define.ts";

/**
 * The built-in tools this build implements, one line per module: GET /api/v1/tools and the families
 * the rule table hands out list them in this order.
 */
export const BUILTIN_TOOLS: readonly BuiltinTool[] = [
  ...[webSearch, codeExec, fileRead, webFetch, fileWrite, requestApproval],
  ...MEMORY_TOOL_DECLARATIONS,
  ...COORDINATION_TOOL_DECLARATIONS,
  ...CHAT_TOOL_DECLARATIONS,
];

const reserved = (family: ToolFamily, ...names: string[]) => names.map((name) => ({ name, family }));

/**
 * Names the built-in tools page gives to tools this build does not implement yet, with their family:
 * no custom Tool may take one, a Task may select one, and the rule table hands them out (admission
 * then notes that they are not offered). A family that lands declares its tools and drops its line here.
 */
export const RESERVED_TOOLS: readonly { name: string; family: ToolFamily }[] = [
  ...reserved("pull-requests", "create_pull_request", "list_pull_requests", "check_pr_review_marker", "check_pull_request_ci", "merge_pull_request", "auto_merge_pull_request", "review_pull_request", "post_review_comment"),
  ...reserved("issues", "list_issues", "get_issue", "comment_on_issue"),
  ...reserved("gateway", "reply_in_conversation"),
  ...reserved("connectors", "list_connections"),
  ...reserved("monitors", "run_validation"),
];

/** Every name a built-in owns, declared or reserved; a custom Tool may not take one (built-ins would shadow it). */
export const BUILTIN_TOOL_NAMES: ReadonlySet<string> = new Set([...BUILTIN_TOOLS, ...RESERVED_TOOLS].map((tool) => tool.name));

/** The names of these families' tools, declared and then reserved, family by family. */
export function familyToolNames(...families: ToolFamily[]): string[] {
  const every = [...BUILTIN_TOOLS, ...RESERVED_TOOLS];
  return families.flatMap((family) => every.filter((tool) => tool.family === family).map((tool) => tool.name));
}

/** The tools the OpenAI- and Anthropic-compatible endpoints offer their clients and run server-side. */
export const COMPAT_TOOL_NAMES: readonly string[] = BUILTIN_TOOLS.filter((tool) => tool.offeredOnCompat).map((tool) => tool.name);

export function builtinTool(name: string): BuiltinTool | undefined {
  return BUILTIN_TOOLS.find((tool) => tool.name === name);
}
