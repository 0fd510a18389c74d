import type { FastifyInstance } from "fastify";
import type { ProviderSpec } from "../../resources/provider.ts";
import type { ToolSpec, ToolStatus } from "../../resources/tool.ts";
import type { Resource } from "../../resources/meta.ts";
import { toolDefinition } from "../../tools/define.ts";
import { BUILTIN_TOOL_NAMES, BUILTIN_TOOLS, builtinTool } from "../../tools/registry.ts";
import { OrkaError, errorMessage } from "../../util/errors.ts";
import { checkEgressUrl } from "../../policy/ssrf.ts";
import { scriptPath } from "../../providers/scripted.ts";
import { isOperator } from "../auth.ts";
import type { Principal } from "../../auth/principal.ts";
import type { ApiContext } from "../context.ts";
import { hasUserinfo, isCredentialHeader } from "./metadata-rules.ts";
import { registerKindRoutes } from "./resources.ts";

const operatorOnly = (principal: Principal, field: string) => {
  if (!isOperator(principal)) throw new OrkaError("invalid_argument", `${field} can only be set with an admin or operator token`);
};

/** GET /tools lists the listed built-ins (never coordination, memory, GitHub, agent or chat tools). */
const LISTED_FAMILIES = new Set(["core"]);

function describeBuiltin(name: string) {
  const tool = builtinTool(name)!;
  const { description, parameters } = toolDefinition(tool);
  return { name, builtin: true, description, parameters };
}

function describeCustom(tool: Resource<ToolSpec, ToolStatus>) {
  return {
    name: tool.metadata.name,
    namespace: tool.metadata.namespace,
    builtin: false,
    description: tool.spec.description,
    parameters: tool.spec.parameters,
    available: tool.status?.available ?? tool.spec.enabled,
    url: tool.spec.http?.url ?? tool.spec.mcp?.url ?? "",
  };
}

/**
 * Every call of an HTTP Tool goes through the egress guard, whoever created the Tool, so creation
 * refuses the same literal hosts (and URL credentials) up front instead of storing a Tool that
 * can never answer. `{{param}}` parts stand for a public name here; each call checks the real URL.
 */
function checkToolUrl(url: string, ctx: ApiContext): void {
  try {
    checkEgressUrl(url.replace(/\{\{[^}]*\}\}/g, "x"), ctx.egress);
  } catch (err) {
    throw new OrkaError("invalid_argument", `spec.http.url: ${errorMessage(err)}; ${toolUrlHint(url, ctx)}`);
  }
}

function toolUrlHint(url: string, ctx: ApiContext): string {
  if (hasUserinfo(url)) return "put the credential in a Secret and name it in spec.http.authSecretRef";
  const loopback = ctx.egress.allowLoopback ? "" : " (ORKA_ALLOW_LOOPBACK_EGRESS=true lets them reach loopback)";
  return `Orka calls HTTP Tools only at public addresses${loopback}`;
}

export function registerKinds(app: FastifyInstance, ctx: ApiContext): void {
  registerKindRoutes(app, ctx, {
    kind: "Provider",
    check: (object, principal, ctx) => {
      const spec = object.spec as ProviderSpec;
      if (spec.baseURL !== undefined) operatorOnly(principal, "spec.baseURL");
      // The server reads the file; a namespace user may not make it read one. Read time checks the real file again.
      if (spec.scripted?.file !== undefined) {
        operatorOnly(principal, "spec.scripted.file");
        scriptPath(spec.scripted.file, ctx.providers.scriptedDir);
      }
    },
  });
  registerKindRoutes(app, ctx, { kind: "Agent" });
  registerKindRoutes(app, ctx, { kind: "Skill" });
  registerKindRoutes(app, ctx, {
    kind: "Tool",
    reserved: (name) => (BUILTIN_TOOL_NAMES.has(name) ? "tool name is reserved for a built-in tool" : undefined),
    check: (object, principal, ctx) => {
      const http = (object.spec as ToolSpec).http;
      if (!http) return;
      checkToolUrl(http.url, ctx);
      if (http.authSecretRef) operatorOnly(principal, "spec.http.authSecretRef");
      for (const header of Object.keys(http.headers ?? {})) if (isCredentialHeader(header)) operatorOnly(principal, `spec.http.headers.${header}`);
    },
    list: async (ctx, namespace, principal) => {
      const custom = await ctx.store.list<ToolSpec, ToolStatus>("Tool", { namespace });
      const builtins = BUILTIN_TOOLS.filter((t) => LISTED_FAMILIES.has(t.family)).map((t) => describeBuiltin(t.name));
      const items = [...builtins, ...custom.items.map(describeCustom)].filter((tool) => ctx.grants.showsTool(principal.transaction, tool.name));
      return { items, metadata: { continue: "", remainingItemCount: 0 } };
    },
    get: async (ctx, namespace, name) => {
      const builtin = builtinTool(name);
      if (builtin && LISTED_FAMILIES.has(builtin.family)) return describeBuiltin(name);
      const tool = await ctx.store.get<ToolSpec, ToolStatus>("Tool", namespace, name);
      if (!tool) throw new OrkaError("not_found", "tool not found");
      return { ...describeCustom(tool), metadata: tool.metadata, spec: tool.spec, status: tool.status ?? {} };
    },
  });
}
