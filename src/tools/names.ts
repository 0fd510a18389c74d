import { familyToolNames } from "./registry.ts";

/**
 * Kept only for src/api/compat/engine.ts, which still slices its offered tools from this list; once
 * it imports COMPAT_TOOL_NAMES from registry.ts this module is deleted.
 */
export const CORE_TOOLS = familyToolNames("core");
