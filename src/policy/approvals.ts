import { canonicalJson, sha256Hex } from "../util/hash.ts";
import type { Resource } from "../resources/meta.ts";
import type { ToolSpec } from "../resources/tool.ts";
import { OrkaError } from "../util/errors.ts";
import { redact } from "./redact.ts";

const RESERVED_URL_KEY = "__orkaApprovalURL";
const PREVIEW_LIMIT = 8 * 1024;


/** A binding sets the URL's parameters apart under this key: no call may use it, gated or not. */
export function refuseReservedArgument(args: Record<string, unknown>): void {
  if (RESERVED_URL_KEY in args) throw new OrkaError("invalid_argument", `${RESERVED_URL_KEY} is reserved`);
}

export interface ApprovalBinding {
  id: string;
  argsDigest: string;
  specDigest: string;
  preview: string;
}

/**
 * Binds an approval to one exact call: the Task (by uid), the Tool (and for an MCP Tool the server's tool
 * called), the canonical arguments (auth key dropped, URL parameters set apart) and the Tool's spec.
 */
export function bindApproval(
  target: { namespace: string; task: string; taskUID: string },
  tool: Resource<ToolSpec, unknown>,
  args: Record<string, unknown>,
  serverTool?: string,
): ApprovalBinding {
  refuseReservedArgument(args);
  const http = tool.spec.http;
  const sanitized: Record<string, unknown> = { ...args };
  if (http?.authInject === "body" && http.authBodyKey) delete sanitized[http.authBodyKey];
  const urlParams = [...(http?.url.matchAll(/\{\{\s*([A-Za-z0-9_.-]+)\s*\}\}/g) ?? [])].map((m) => m[1]);
  if (urlParams.length > 0) {
    const params: Record<string, unknown> = {};
    for (const name of urlParams) {
      params[name] = sanitized[name];
      delete sanitized[name];
    }
    sanitized[RESERVED_URL_KEY] = { template: http!.url, params };
  }
  const argsDigest = sha256Hex(canonicalJson(sanitized));
  const specDigest = sha256Hex(canonicalJson(tool.spec));
  const called = serverTool === undefined ? [tool.metadata.name] : [tool.metadata.name, serverTool];
  const id = sha256Hex([target.namespace, target.task, target.taskUID, ...called, argsDigest, specDigest].join("\0"));
  const redacted = redact(JSON.stringify(sanitized));
  const preview = redacted.length <= PREVIEW_LIMIT ? redacted : JSON.stringify({ truncated: true, preview: "[truncated sanitized approval target arguments]" });
  return { id, argsDigest, specDigest, preview };
}
