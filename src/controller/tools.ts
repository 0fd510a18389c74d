import type { ToolSpec, ToolStatus } from "../resources/tool.ts";
import type { ResourceStore } from "../store/resource-store.ts";
import { errorMessage } from "../util/errors.ts";
import { guardedRequest, type EgressPolicy } from "../policy/ssrf.ts";
import { redactForStorage } from "../policy/redact.ts";
import { listMcpTools, mcpEndpoint, type McpReach } from "../tools/custom/mcp-tool.ts";
import type { Wake } from "./options.ts";

const TOOL_PROBE_INTERVAL_MS = 5 * 60_000;
const PROBE_TIMEOUT_MS = 5_000;

/** A Tool's availability, probed when it changes and every 5 minutes, kept in its status. */
export class ToolReconciler {
  private readonly store: ResourceStore;
  private readonly reach: McpReach;
  private readonly wake: Wake;

  constructor(options: { store: ResourceStore; reach: McpReach; wake: Wake }) {
    this.store = options.store;
    this.reach = options.reach;
    this.wake = options.wake;
  }

  async reconcile(namespace: string, name: string): Promise<void> {
    const tool = await this.store.get<ToolSpec, ToolStatus>("Tool", namespace, name);
    if (!tool) return;
    const status = tool.spec.mcp ? await probeMcpTool(name, tool.spec.mcp, this.reach) : await probeTool(tool.spec, this.reach.egress);
    // The probe took a while: write over the Tool as it is now.
    const fresh = await this.store.get<ToolSpec, ToolStatus>("Tool", namespace, name);
    if (fresh && JSON.stringify(status) !== JSON.stringify(fresh.status ?? {})) await this.store.updateStatus({ ...fresh, status });
    this.wake(`Tool/${namespace}/${name}`, TOOL_PROBE_INTERVAL_MS);
  }
}

/** The URL a probe may knock on: `{{param}}` placeholders are emptied, nothing is sent. */
function probeEndpoint(spec: ToolSpec): string | undefined {
  return spec.http?.url.replace(/\{\{\s*[A-Za-z0-9_.-]+\s*\}\}/g, "");
}

/**
 * An MCP Tool is available when its server answers `initialize` and `tools/list`; the tools it offers,
 * with their input schemas, are kept in its status for Tasks to be offered. The probe reaches the server
 * as its calls do: a URL behind the same egress guard, a command as a fresh process in the sandbox.
 */
async function probeMcpTool(name: string, spec: NonNullable<ToolSpec["mcp"]>, reach: McpReach): Promise<ToolStatus> {
  const endpoint = mcpEndpoint(spec);
  const where = endpoint ? { endpoint } : {};
  try {
    const { tools, notes } = await listMcpTools(name, spec, reach, PROBE_TIMEOUT_MS);
    if (tools.length === 0) return { available: false, error: ["the server offers none of the tools asked for", ...notes].join("; "), ...where, mcpTools: [] };
    return { available: true, ...where, mcpTools: tools, ...(notes.length > 0 ? { error: notes.join("; ") } : {}) };
  } catch (err) {
    // A stdio server's stderr is in the reason, and the status is readable by anyone who can read the Tool.
    return { available: false, error: redactForStorage(`MCP server unreachable: ${errorMessage(err)}`), ...where };
  }
}

/**
 * A Tool is unavailable when its endpoint cannot be reached, or answers 404 or 5xx.
 * A HEAD request: tools are not called just to see whether they are there. It goes through the
 * same egress guard as the Tool's calls, so a probe never knocks where a call may not go.
 */
async function probeTool(spec: ToolSpec, egress: EgressPolicy): Promise<ToolStatus> {
  const endpoint = probeEndpoint(spec);
  if (!endpoint) return { available: false, error: "the Tool has no endpoint" };
  try {
    const code = await guardedRequest(endpoint, egress, { method: "HEAD", maxRedirects: 0, timeoutMs: PROBE_TIMEOUT_MS }, async (response) => response.statusCode);
    if (code === 404 || code >= 500) return { available: false, error: `endpoint answered HTTP ${code}`, endpoint };
    return { available: true, endpoint };
  } catch (err) {
    return { available: false, error: `endpoint unreachable: ${errorMessage(err)}`, endpoint };
  }
}
