import { z } from "zod";
import type { ToolDefinition } from "../providers/model.ts";
import type { Workspace } from "./core/workspace.ts";
import type { FetchSettings, GithubToolSettings, SearchSettings } from "./settings.ts";

/** How long one control-plane call may take (10 s unless said), and the signal that ends it early. */
export interface CallOptions {
  timeoutMs?: number;
  signal?: AbortSignal;
}

export interface ControlPlane {
  get(path: string, query?: Record<string, string | undefined>): Promise<unknown>;
  post(path: string, body: unknown, options?: CallOptions): Promise<unknown>;
  delete(path: string, query?: Record<string, string | undefined>): Promise<unknown>;
  /** The same control plane, sending one tool call's idempotency key, so a repeated call is answered from its ledger. */
  withIdempotencyKey(key: string): ControlPlane;
}

export interface ToolSettings {
  fetch: FetchSettings;
  search: SearchSettings;
  /** Absent: the GitHub tools' defaults. */
  github?: GithubToolSettings;
}

/** What a tool handler may use; tools never reach for globals or the environment. */
export interface ToolContext {
  namespace: string;
  taskName: string;
  /** The attempt's private working directory (`/workspace` to the model), shared by file and code tools. */
  workspaceDir: string;
  /** The attempt's private `/tmp`. */
  tmpDir: string;
  /** File access confined to `/workspace` and `/tmp`. */
  workspace: Workspace;
  /** Operator settings the tools need (egress policy, search backend). */
  settings: ToolSettings;
  /** The Task's Agent, the default for memory provenance. */
  agentName?: string;
  /** The Task's session (`spec.sessionRef.name`), if it has one. */
  sessionName?: string;
  /** The journal's key of this call: the same when a resumed attempt runs the call again. */
  callKey?: string;
  /** The control plane, as this attempt: paths are under /internal/v1 and checked against the attempt. */
  controlPlane: ControlPlane;
  /** Ends this iteration after the current tool call (an approval was requested). */
  park: (message: string) => void;
  signal: AbortSignal;
}

export type ResumeRule = "rerun" | "unknown";

/**
 * The groups the built-in tools page names, which the rule table in assignment.ts hands out whole:
 * `coordination` (delegate, wait, containers, cancel), `messaging` (between a coordinator's children),
 * `planning` (update_plan), `agents` (create and delete Agents), `pull-requests` and `issues` (GitHub),
 * `gateway` (replies while a gateway Task runs), `chat`, `connectors` and `monitors` (their own features).
 */
export type ToolFamily = "core" | "memory" | "coordination" | "messaging" | "planning" | "agents" | "pull-requests" | "issues" | "gateway" | "chat" | "connectors" | "monitors";

export interface BuiltinTool<Params extends z.ZodObject = z.ZodObject> {
  name: string;
  family: ToolFamily;
  description: string;
  parameters: Params;
  /** Alternative argument names a model may use (camelCase for snake_case), renamed before validation. */
  aliases?: Record<string, string>;
  /**
   * What a resumed attempt does with a call of this tool that started but left no result: run it
   * again (read-only, idempotent, or deduplicated by the control plane with the call's idempotency
   * key; the default), or tell the model the outcome is unknown rather than risk acting twice.
   */
  onResume?: ResumeRule | ((args: z.output<Params>) => ResumeRule);
  /**
   * Only reads the control plane (and may poll it): its calls carry no idempotency key, so each one
   * sees fresh state. Every other tool makes at most one control-plane call per run, keyed, so the
   * effect ledger answers a repeat of it.
   */
  readOnly?: boolean;
  /**
   * Answers arguments that do not validate with a `{success: false, errorType: "invalid_arguments"}` result
   * instead of a tool error, as chat tools answer every refusal (see tools/envelope.ts).
   */
  answersWithEnvelope?: boolean;
  /** Offered to clients of the OpenAI- and Anthropic-compatible endpoints, which run it server-side. */
  offeredOnCompat?: boolean;
  run(args: z.output<Params>, ctx: ToolContext): Promise<unknown>;
}

/**
 * Declares a built-in tool once: its JSON schema, argument validation and docs all come from here.
 * The handler is type-checked against its own schema; the registry then holds tools of any schema,
 * and the executor validates arguments with `parameters` before calling `run`.
 */
export function defineTool<Params extends z.ZodObject>(tool: BuiltinTool<Params>): BuiltinTool {
  return tool as unknown as BuiltinTool;
}

export function toolDefinition(tool: BuiltinTool): ToolDefinition {
  let definition = definitions.get(tool);
  if (!definition) {
    const schema = z.toJSONSchema(tool.parameters, { io: "input" }) as Record<string, unknown>;
    delete schema.$schema;
    definition = { name: tool.name, description: tool.description, parameters: schema };
    definitions.set(tool, definition);
  }
  return definition;
}

/** A declaration's definition is the same every time: it is worked out once per process. */
const definitions = new WeakMap<BuiltinTool, ToolDefinition>();
