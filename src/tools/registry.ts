import type { BuiltinTool } from "./define.ts";

/**
 * The built-in tools this build implements, in the order GET /api/v1/tools lists them.
 * Each tool family registers its declarations here as it lands.
 */
export const BUILTIN_TOOLS: readonly BuiltinTool[] = [];

export function builtinTool(name: string): BuiltinTool | undefined {
  return BUILTIN_TOOLS.find((tool) => tool.name === name);
}
