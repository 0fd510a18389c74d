import { codeExec } from "./core/code-exec.ts";
import { fileRead } from "./core/file-read.ts";
import { fileWrite } from "./core/file-write.ts";
import { webFetch } from "./core/web-fetch.ts";
import { webSearch } from "./core/web-search.ts";
import { MEMORY_TOOL_DECLARATIONS } from "./memory/memory-tools.ts";
import { COORDINATION_TOOL_DECLARATIONS, requestApproval } from "./coordination/coordination-tools.ts";
import { CHAT_TOOL_DECLARATIONS } from "./chat/create-pr-monitor.ts";
import { GITHUB_TOOL_DECLARATIONS } from "./github/index.ts";
import { MONITOR_TOOL_DECLARATIONS } from "./monitors/run-validation.ts";
import type { BuiltinTool, ToolFamily } from "./define.ts";

/**
 * The built-in tools this build implements, one line per module: GET /api/v1/tools and the families
 * the rule table hands out list them in this order.
 */
export const BUILTIN_TOOLS: readonly BuiltinTool[] = [
  ...[webSearch, codeExec, fileRead, webFetch, fileWrite, requestApproval],
  ...MEMORY_TOOL_DECLARATIONS,
  ...COORDINATION_TOOL_DECLARATIONS,
  ...GITHUB_TOOL_DECLARATIONS,
  ...CHAT_TOOL_DECLARATIONS,
  ...MONITOR_TOOL_DECLARATIONS,
];

const listed = (family: ToolFamily, ...names: string[]) => names.map((name) => ({ name, family }));

/**
 * The names the built-in tools page gives the tools of families this build has not wholly built, with
 * their family, in the page's order (which the rule table keeps while a family lands tool by tool). A
 * family that is wholly declared drops its line here.
 */
const PAGE_TOOLS: readonly { name: string; family: ToolFamily }[] = [
  ...listed("pull-requests", "create_pull_request", "list_pull_requests", "check_pr_review_marker", "check_pull_request_ci", "merge_pull_request", "auto_merge_pull_request", "review_pull_request", "post_review_comment"),
  ...listed("issues", "list_issues", "get_issue", "comment_on_issue"),
  ...listed("gateway", "reply_in_conversation"),
  ...listed("chat", "create_pr_monitor"),
  ...listed("connectors", "list_connections"),
];

const DECLARED = new Set(BUILTIN_TOOLS.map((tool) => tool.name));

/**
 * Names of tools this build does not implement yet: no custom Tool may take one, a Task may select one,
 * and the rule table hands them out (admission then notes that they are not offered).
 */
export const RESERVED_TOOLS = PAGE_TOOLS.filter((tool) => !DECLARED.has(tool.name));

/** Every name a built-in owns, declared or reserved; a custom Tool may not take one (built-ins would shadow it). */
export const BUILTIN_TOOL_NAMES: ReadonlySet<string> = new Set([...BUILTIN_TOOLS, ...RESERVED_TOOLS].map((tool) => tool.name));

/** The names of these families' tools, declared or not, family by family: the page's order where it lists them, else declaration order. */
export function familyToolNames(...families: ToolFamily[]): string[] {
  return families.flatMap((family) => {
    const paged = PAGE_TOOLS.filter((tool) => tool.family === family).map((tool) => tool.name);
    const others = BUILTIN_TOOLS.filter((tool) => tool.family === family && !paged.includes(tool.name)).map((tool) => tool.name);
    return [...others, ...paged];
  });
}

/** The tools the OpenAI- and Anthropic-compatible endpoints offer their clients and run server-side. */
export const COMPAT_TOOL_NAMES: readonly string[] = BUILTIN_TOOLS.filter((tool) => tool.offeredOnCompat).map((tool) => tool.name);

export function builtinTool(name: string): BuiltinTool | undefined {
  return BUILTIN_TOOLS.find((tool) => tool.name === name);
}
