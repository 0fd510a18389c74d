import { codeExec } from "./core/code-exec.ts";
import { fileRead } from "./core/file-read.ts";
import { fileWrite } from "./core/file-write.ts";
import { webFetch } from "./core/web-fetch.ts";
import { webSearch } from "./core/web-search.ts";
import { MEMORY_TOOL_DECLARATIONS } from "./memory/memory-tools.ts";
import { COORDINATION_TOOL_DECLARATIONS, requestApproval } from "./coordination/coordination-tools.ts";
import type { BuiltinTool } from "./define.ts";

/**
 * The built-in tools this build implements, in the order GET /api/v1/tools lists them.
 * Each tool family registers its declarations here as it lands.
 */
export const BUILTIN_TOOLS: readonly BuiltinTool[] = [webSearch, codeExec, fileRead, webFetch, fileWrite, requestApproval, ...MEMORY_TOOL_DECLARATIONS, ...COORDINATION_TOOL_DECLARATIONS];

export function builtinTool(name: string): BuiltinTool | undefined {
  return BUILTIN_TOOLS.find((tool) => tool.name === name);
}
