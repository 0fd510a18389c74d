import { randomBytes } from "node:crypto";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { z } from "zod";
import { type ChatMessage, type FinishReason, type ToolDefinition, isRequestRefusal } from "../../providers/model.ts";
import { describeZodError } from "../../resources/validate.ts";
import { errorMessage } from "../../util/errors.ts";
import { resolveNamespace } from "../auth.ts";
import { principalOf, type ApiContext } from "../context.ts";
import { heldStream } from "../held-output.ts";
import { listModels } from "./models.ts";
import { abortWhenClientLeaves, authorizeCompatTools, prepareCompat, sseComment, type CompatAnswer } from "./engine.ts";

/** Text and refusal parts are read; media parts would need a model that sees them, so they are refused rather than dropped. */
const contentPart = z.looseObject({ type: z.string(), text: z.string().optional() }).refine((part) => part.type === "text" || part.type === "refusal", {
  message: "only text content parts are supported; image, audio and file parts are not passed to the model",
});
const textContent = z.union([z.string(), z.array(contentPart), z.null()]);

const requestSchema = z.looseObject({
  model: z.string({ message: "model is required" }).min(1, "model is required"),
  messages: z
    .array(
      z.looseObject({
        role: z.enum(["system", "developer", "user", "assistant", "tool"]),
        content: textContent.optional(),
        tool_calls: z.array(z.object({ id: z.string(), type: z.literal("function"), function: z.object({ name: z.string(), arguments: z.string() }) })).optional(),
        tool_call_id: z.string().optional(),
      }),
    )
    .min(1, "messages is required and must be non-empty"),
  tools: z.array(z.object({ type: z.literal("function"), function: z.object({ name: z.string(), description: z.string().optional(), parameters: z.record(z.string(), z.unknown()).optional() }) })).optional(),
  temperature: z.number().min(0).max(2).optional(),
  max_tokens: z.number().int().optional(),
  max_completion_tokens: z.number().int().optional(),
  stream: z.boolean().optional(),
  stream_options: z.object({ include_usage: z.boolean().optional() }).optional(),
  n: z.number().int().optional(),
  response_format: z
    .looseObject({ type: z.string() })
    .refine((format) => format.type === "text", {
      message: "only {type: text} is supported: the answer is the model's text as is; ask for JSON in the prompt instead",
    })
    .optional(),
});
type OpenAIRequest = z.infer<typeof requestSchema>;

export function openAIError(reply: FastifyReply, status: number, message: string, param: string | null = null) {
  const type = status >= 500 ? "server_error" : status === 401 ? "authentication_error" : "invalid_request_error";
  return reply.code(status).send({ error: { message, type, param, code: status === 404 ? "model_not_found" : null } });
}

const joinText = (content: z.infer<typeof textContent> | undefined) =>
  typeof content === "string" ? content : (content ?? []).filter((p) => p.type === "text").map((p) => p.text ?? "").join("\n");

/** OpenAI messages to Orka's: system text apart; in tool mode the client's tool history is dropped. */
function toChat(request: OpenAIRequest, keepTools: boolean): { system: string; messages: ChatMessage[] } {
  const system: string[] = [];
  const messages: ChatMessage[] = [];
  for (const m of request.messages) {
    if (m.role === "system" || m.role === "developer") system.push(joinText(m.content));
    else if (m.role === "user") messages.push({ role: "user", content: joinText(m.content) });
    else if (m.role === "assistant") {
      const toolCalls = keepTools ? m.tool_calls?.map((c) => ({ id: c.id, name: c.function.name, arguments: c.function.arguments })) : undefined;
      if (!toolCalls?.length && !joinText(m.content)) continue;
      messages.push({ role: "assistant", content: joinText(m.content), ...(toolCalls?.length ? { toolCalls } : {}) });
    } else if (keepTools) messages.push({ role: "tool", toolCallId: m.tool_call_id ?? "", name: "", content: joinText(m.content) });
  }
  return { system: system.join("\n\n"), messages };
}

const finishReason = (finish: FinishReason, hasCalls: boolean) =>
  hasCalls ? "tool_calls" : finish === "length" ? "length" : finish === "refusal" ? "content_filter" : "stop";

function completionBody(id: string, model: string, answer: CompatAnswer) {
  const toolCalls = answer.toolCalls.map((c, index) => ({ index, id: c.id, type: "function", function: { name: c.name, arguments: c.arguments } }));
  return {
    id,
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [
      {
        index: 0,
        message: { role: "assistant", content: answer.text || (toolCalls.length ? null : ""), ...(toolCalls.length ? { tool_calls: toolCalls } : {}), refusal: null },
        finish_reason: finishReason(answer.finish, toolCalls.length > 0),
        logprobs: null,
      },
    ],
    usage: usageOf(answer),
  };
}

const usageOf = (answer: CompatAnswer) => ({
  prompt_tokens: answer.usage.inputTokens,
  completion_tokens: answer.usage.outputTokens,
  total_tokens: answer.usage.inputTokens + answer.usage.outputTokens,
});

export function registerOpenAICompat(app: FastifyInstance, ctx: ApiContext): void {
  app.get("/models", async (request: FastifyRequest) => {
    const namespace = resolveNamespace(principalOf(request), (request.query as { namespace?: string }).namespace);
    return { object: "list", data: await listModels(ctx.store, namespace) };
  });

  app.post("/chat/completions", async (request, reply) => {
    const parsed = requestSchema.safeParse(request.body ?? {});
    if (!parsed.success) {
      const { field, message } = describeZodError(parsed.error);
      return openAIError(reply, 400, message.replace(/^[^:]*: (messages is required|model is required)/, "$1"), field || null);
    }
    const body = parsed.data;
    if ((body.n ?? 1) > 1) return openAIError(reply, 400, "n > 1 is not supported", "n");
    const maxTokens = body.max_completion_tokens ?? body.max_tokens;
    if (maxTokens !== undefined && maxTokens < 16) return openAIError(reply, 400, `max_tokens must be at least 16, got ${maxTokens}`, "max_tokens");
    const passthrough = String(request.headers["x-orka-tools"] ?? "").toLowerCase() === "disabled";
    const { system, messages } = toChat(body, passthrough);
    const clientTools: ToolDefinition[] = (body.tools ?? []).map((t) => ({
      name: t.function.name,
      description: t.function.description ?? "",
      parameters: t.function.parameters ?? { type: "object", properties: {} },
    }));
    const namespace = resolveNamespace(principalOf(request), (request.query as { namespace?: string }).namespace);
    authorizeCompatTools(ctx, request, "createChatCompletion", passthrough, namespace);
    const id = `chatcmpl-${randomBytes(4).toString("hex")}`;
    const signal = abortWhenClientLeaves(reply);
    const out = heldStream(ctx.gate, reply.raw);
    let run: () => Promise<CompatAnswer>;
    try {
      run = await prepareCompat(ctx, {
        namespace, model: body.model, system, messages, maxTokens, temperature: body.temperature, passthrough, clientTools, signal,
        onProgress: body.stream ? (note) => out.write(sseComment(note)) : undefined,
      });
      if (!body.stream) return completionBody(id, body.model, await run());
    } catch (err) {
      return compatFailure(reply, err);
    }

    reply.hijack();
    out.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
    const created = Math.floor(Date.now() / 1000);
    const chunk = (delta: Record<string, unknown>, finish: string | null = null, extra: Record<string, unknown> = {}) =>
      out.write(`data: ${JSON.stringify({ id, object: "chat.completion.chunk", created, model: body.model, choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }], ...extra })}\n\n`);
    chunk({ role: "assistant", content: "" });
    try {
      const answer = await run();
      for (const piece of answer.text.match(/[\s\S]{1,64}/g) ?? []) chunk({ content: piece });
      answer.toolCalls.forEach((c, index) => chunk({ tool_calls: [{ index, id: c.id, type: "function", function: { name: c.name, arguments: c.arguments } }] }));
      chunk({}, finishReason(answer.finish, answer.toolCalls.length > 0));
      if (body.stream_options?.include_usage) out.write(`data: ${JSON.stringify({ id, object: "chat.completion.chunk", created, model: body.model, choices: [], usage: usageOf(answer) })}\n\n`);
      out.end("data: [DONE]\n\n");
    } catch (err) {
      out.end(`data: ${JSON.stringify({ error: { message: failureMessage(err), type: "server_error", param: null, code: null } })}\n\n`);
    }
  });
}

function failureMessage(err: unknown): string {
  return isRequestRefusal(err) ? err.message : `completion failed: ${errorMessage(err)}`;
}

function compatFailure(reply: FastifyReply, err: unknown) {
  if (isRequestRefusal(err)) return openAIError(reply, err.httpStatus, err.message, err.field ?? null);
  return openAIError(reply, 502, failureMessage(err));
}
