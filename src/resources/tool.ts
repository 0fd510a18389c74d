import { z } from "zod";
import { durationText, httpURL, objectName } from "./meta.ts";

/** What a custom Tool does, said by its owner: coding-agent runtimes reach a Tool only when it says. A `read` Tool's calls are not reserved in the effect ledger. */
export const BROKERED_TOOL_CLASSES = ["read", "write", "coordination"] as const;
/** Why a name cannot be a stdio MCP server's environment variable; ORKA_ names are Orka's own and never handed to a server. */
function envNameProblem(name: string): string | undefined {
  if (!/^[A-Za-z_][A-Za-z0-9_]{0,127}$/.test(name)) return "an environment variable name is letters, digits and _ (at most 128), not starting with a digit";
  if (name.toUpperCase().startsWith("ORKA_")) return "names starting with ORKA_ are Orka's own; rename the variable";
  return undefined;
}

const mcpEnv = z.record(z.string(), z.string().max(4096)).superRefine((env, ctx) => {
  for (const name of Object.keys(env)) {
    const problem = envNameProblem(name);
    if (problem) ctx.addIssue({ code: "custom", message: problem, path: [name] });
  }
});

export const toolSpecSchema = z
  .strictObject({
    description: z.string().min(1, "is required"),
    parameters: z.record(z.string(), z.unknown()).default({ type: "object", properties: {} }),
    enabled: z.boolean().default(true),
    brokeredToolClass: z.enum(BROKERED_TOOL_CLASSES, { message: "must be read, write or coordination" }).optional(),
    http: z
      .strictObject({
        url: httpURL,
        method: z.enum(["GET", "POST", "PUT", "PATCH", "DELETE"]).default("POST"),
        headers: z.record(z.string(), z.string()).optional(),
        timeout: durationText.default("30s"),
        authSecretRef: z.strictObject({ name: objectName, key: z.string().min(1) }).optional(),
        authInject: z.enum(["header", "body"]).default("header"),
        authBodyKey: z.string().optional(),
      })
      .refine((h) => h.authInject !== "body" || !!h.authBodyKey, {
        message: "authInject: body needs authBodyKey",
        path: ["authBodyKey"],
      })
      .optional(),
    mcp: z
      .strictObject({
        /** A server over Streamable HTTP. */
        url: httpURL.optional(),
        path: z.string().default("/mcp"),
        /** A server over stdio: its command and arguments, run in the sandbox (one process per probe and per call). */
        command: z
          .array(z.string().min(1, "an empty argument; leave it out").max(4096), {
            message: 'must be a list: the executable, then its arguments, e.g. ["mcp-server-everything", "stdio"]',
          })
          .min(1, 'name the server\'s executable first, e.g. ["mcp-server-everything", "stdio"]')
          .max(64)
          .optional(),
        /** Plain environment values for a stdio server; Orka's own and the sandbox's start from nothing else. */
        env: mcpEnv.optional(),
        /** Which of the server's tools to offer; all when absent. */
        tools: z.array(z.string().min(1).max(128)).min(1, "name at least one tool, or leave tools out to offer all").max(64).optional(),
        timeout: durationText.default("30s"),
      })
      .refine((m) => (m.url === undefined) !== (m.command === undefined), {
        message: "an MCP Tool needs exactly one of url (a Streamable HTTP server) and command (a stdio server run in the sandbox)",
        path: ["url"],
      })
      .refine((m) => m.env === undefined || m.command !== undefined, {
        message: "env is for a server started from command; a server at url has its own environment",
        path: ["env"],
      })
      .optional(),
  })
  .refine((spec) => (spec.http === undefined) !== (spec.mcp === undefined), {
    message: "a Tool needs exactly one of http and mcp",
    path: ["http"],
  });
export type ToolSpec = z.infer<typeof toolSpecSchema>;

/** One tool an MCP server offers, as its Tool's probe found it. */
export const mcpToolStatusSchema = z.object({
  name: z.string(),
  /** The name the model calls it by: `<Tool>_<name>`, sanitized. */
  modelName: z.string(),
  description: z.string(),
  inputSchema: z.record(z.string(), z.unknown()),
});
export type McpToolStatus = z.infer<typeof mcpToolStatusSchema>;

export const toolStatusSchema = z.object({
  available: z.boolean().optional(),
  error: z.string().optional(),
  endpoint: z.string().optional(),
  /** For an MCP Tool: the server's tools it offers. */
  mcpTools: z.array(mcpToolStatusSchema).optional(),
});
export type ToolStatus = z.infer<typeof toolStatusSchema>;
