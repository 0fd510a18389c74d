import { z } from "zod";
import { durationText, httpURL, objectName } from "./meta.ts";

/** What a custom Tool does, said by its owner: coding-agent runtimes reach a Tool only when it says. A `read` Tool's calls are not reserved in the effect ledger. */
export const BROKERED_TOOL_CLASSES = ["read", "write", "coordination"] as const;

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
        url: httpURL.optional(),
        path: z.string().default("/mcp"),
        /** Which of the server's tools to offer; all when absent. */
        tools: z.array(z.string().min(1).max(128)).min(1, "name at least one tool, or leave tools out to offer all").max(64).optional(),
        timeout: durationText.default("30s"),
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
