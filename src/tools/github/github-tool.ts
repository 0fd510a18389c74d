import type { z } from "zod";
import { defineTool, type BuiltinTool, type ToolContext, type ToolFamily } from "../define.ts";
import { GITHUB_ALIASES } from "./schemas.ts";

/** The control-plane path of a GitHub tool's server half (under /internal/v1). */
export const githubToolPath = (ctx: ToolContext, tool: string) => `github/${ctx.namespace}/${ctx.taskName}/${tool}`;

/**
 * A GitHub tool whose whole work is one call to its server half: credentials stay on the control plane,
 * which checks the scope, reads the Secret and calls GitHub. `readOnly` tools send no idempotency key;
 * the others send one, so a repeated call is answered from the effect ledger instead of acting twice.
 */
export function githubTool<Params extends z.ZodObject>(tool: {
  name: string;
  family: Extract<ToolFamily, "pull-requests" | "issues">;
  description: string;
  parameters: Params;
  readOnly: boolean;
}): BuiltinTool {
  return defineTool({
    ...tool,
    aliases: GITHUB_ALIASES,
    async run(args, ctx) {
      return ctx.controlPlane.post(githubToolPath(ctx, tool.name), args);
    },
  });
}
