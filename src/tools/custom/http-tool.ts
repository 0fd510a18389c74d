import http from "node:http";
import https from "node:https";
import { z } from "zod";
import type { ToolSpec } from "../../resources/tool.ts";
import { redact } from "../../policy/redact.ts";
import { parseDuration } from "../../util/duration.ts";
import { describeZodError } from "../../resources/validate.ts";

export const MAX_RESPONSE_BYTES = 10 * 1024 * 1024;
const ERROR_BODY_BYTES = 4096;

export interface HttpToolCall {
  spec: NonNullable<ToolSpec["http"]>;
  parameters: Record<string, unknown>;
  arguments: Record<string, unknown>;
  /** The value of authSecretRef, when the Tool has one. */
  authValue?: string;
  signal?: AbortSignal;
}

/** Calls a custom HTTP Tool (spec P1.7): URL interpolation, JSON body, auth injection, capped response. */
export async function callHttpTool(call: HttpToolCall): Promise<string> {
  validateArguments(call.parameters, call.arguments);
  const body = { ...call.arguments };
  const url = call.spec.url.replace(/\{\{\s*([A-Za-z0-9_.-]+)\s*\}\}/g, (_, name: string) => {
    const value = body[name];
    delete body[name];
    return encodeURIComponent(value === undefined || value === null ? "" : String(value));
  });
  const headers: Record<string, string> = { "content-type": "application/json", accept: "application/json, text/plain, */*", ...call.spec.headers };
  if (call.authValue !== undefined) {
    if (call.spec.authInject === "body") body[call.spec.authBodyKey!] = call.authValue;
    else headers.authorization = `Bearer ${call.authValue}`;
  }
  const secrets = call.authValue ? [call.authValue] : [];
  const response = await send(url, call.spec.method, headers, JSON.stringify(body), parseDuration(call.spec.timeout), call.signal);
  if (response.status < 200 || response.status >= 300) {
    throw new Error(`tool returned HTTP ${response.status}: ${redact(response.body.subarray(0, ERROR_BODY_BYTES).toString("utf8"), secrets)}`);
  }
  return response.body.toString("utf8");
}

function validateArguments(parameters: Record<string, unknown>, args: Record<string, unknown>): void {
  let schema: z.ZodType;
  try {
    schema = z.fromJSONSchema(parameters as Parameters<typeof z.fromJSONSchema>[0]);
  } catch {
    return; // a schema zod cannot read is still offered to the model; the endpoint validates
  }
  const result = schema.safeParse(args);
  if (!result.success) throw new Error(`invalid arguments: ${describeZodError(result.error).message}`);
}

function send(
  url: string,
  method: string,
  headers: Record<string, string>,
  body: string,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<{ status: number; body: Buffer }> {
  const target = new URL(url);
  const transport = target.protocol === "https:" ? https : http;
  return new Promise((resolve, reject) => {
    const request = transport.request(
      target,
      { method, headers: { ...headers, "content-length": Buffer.byteLength(body) }, timeout: timeoutMs, signal },
      (response) => {
        const chunks: Buffer[] = [];
        let size = 0;
        response.on("data", (chunk: Buffer) => {
          if (size >= MAX_RESPONSE_BYTES) return response.destroy();
          chunks.push(chunk.subarray(0, MAX_RESPONSE_BYTES - size));
          size += chunk.length;
        });
        const done = () => resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks) });
        response.on("end", done);
        response.on("close", done);
        response.on("error", reject);
      },
    );
    request.on("timeout", () => request.destroy(new Error(`tool did not answer within ${timeoutMs} ms`)));
    request.on("error", reject);
    request.end(body);
  });
}
