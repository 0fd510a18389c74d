import type { z } from "zod";
import { defineTool, type BuiltinTool, type ToolContext, type ToolFamily } from "../define.ts";
import { GITHUB_ALIASES } from "./schemas.ts";

/**
 * How long the server half of one call may take: GitHub's 30 s per request, three retries of a read with
 * their back-off, and two rate-limit waits of up to a minute.
 */
export const GITHUB_CALL_TIMEOUT_MS = 5 * 60_000;

/** The control-plane path of a GitHub tool's server half (under /internal/v1). */
export const githubToolPath = (ctx: ToolContext, tool: string) => `github/${ctx.namespace}/${ctx.taskName}/${tool}`;

/** One call of a GitHub tool's server half, as long as GitHub may need and no longer than the Task runs. */
export function callGithubTool(ctx: ToolContext, tool: string, args: unknown): Promise<unknown> {
  return ctx.controlPlane.post(githubToolPath(ctx, tool), args, { timeoutMs: GITHUB_CALL_TIMEOUT_MS, signal: ctx.signal });
}

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
      return callGithubTool(ctx, tool.name, args);
    },
  });
}
