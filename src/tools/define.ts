import { z } from "zod";
import type { ToolDefinition } from "../providers/model.ts";

/** What a tool handler may use; tools never reach for globals or the environment. */
export interface ToolContext {
  namespace: string;
  taskName: string;
  /** The attempt's private working directory, shared by file and code tools of the same Task. */
  workspaceDir: string;
  signal: AbortSignal;
}

export type ToolFamily = "core" | "memory" | "coordination" | "github" | "agents" | "chat";

export interface BuiltinTool<Params extends z.ZodObject = z.ZodObject> {
  name: string;
  family: ToolFamily;
  description: string;
  parameters: Params;
  run(args: z.output<Params>, ctx: ToolContext): Promise<unknown>;
}

/** Declares a built-in tool once: its JSON schema, argument validation and docs all come from here. */
export function defineTool<Params extends z.ZodObject>(tool: BuiltinTool<Params>): BuiltinTool<Params> {
  return tool;
}

export function toolDefinition(tool: BuiltinTool): ToolDefinition {
  const schema = z.toJSONSchema(tool.parameters, { io: "input" }) as Record<string, unknown>;
  delete schema.$schema;
  return { name: tool.name, description: tool.description, parameters: schema };
}
