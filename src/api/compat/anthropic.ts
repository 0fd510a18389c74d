import { randomUUID } from "node:crypto";
import type { FastifyInstance, FastifyReply } from "fastify";
import { z } from "zod";
import { type ChatMessage, type FinishReason, type ToolDefinition, isRequestRefusal } from "../../providers/model.ts";
import { describeZodError } from "../../resources/validate.ts";
import { errorMessage } from "../../util/errors.ts";
import { resolveNamespace } from "../auth.ts";
import { principalOf, type ApiContext } from "../context.ts";
import { heldStream } from "../held-output.ts";
import { listModels } from "./models.ts";
import { abortWhenClientLeaves, authorizeCompatTools, prepareCompat, sseComment, type CompatAnswer } from "./engine.ts";

/**
 * The blocks Orka reads, as OpenAI's parts are read: any other (image, document, thinking, ...)
 * would be lost on the way to the model, so it is refused rather than dropped.
 */
const BLOCK_TYPES = ["text", "tool_use", "tool_result"];
const ONLY_KNOWN_BLOCKS = "only text content blocks are supported, with tool_use and tool_result in a conversation; image, document and other blocks are not passed to the model";
// A refinement, not an enum: inside `string | blocks` that keeps this message instead of zod's "Invalid input".
const blockType = (allowed: string[]) => z.string().refine((type) => allowed.includes(type), { message: ONLY_KNOWN_BLOCKS });
const textBlock = z.looseObject({ type: blockType(["text"]), text: z.string().optional() });

const block = z.looseObject({
  type: blockType(BLOCK_TYPES),
  text: z.string().optional(),
  id: z.string().optional(),
  name: z.string().optional(),
  input: z.unknown().optional(),
  tool_use_id: z.string().optional(),
  content: z.union([z.string(), z.array(textBlock)]).optional(),
});

const requestSchema = z.looseObject({
  model: z.string({ message: "model is required" }).min(1, "model is required"),
  max_tokens: z.number({ message: "max_tokens is required" }).int().positive("max_tokens must be greater than 0"),
  messages: z.array(z.object({ role: z.enum(["user", "assistant"]), content: z.union([z.string(), z.array(block)]) })).min(1, "messages must be non-empty"),
  system: z.union([z.string(), z.array(textBlock.required({ text: true }))]).optional(),
  tools: z.array(z.looseObject({ name: z.string(), description: z.string().optional(), input_schema: z.record(z.string(), z.unknown()).optional() })).optional(),
  temperature: z.number().min(0).max(1).optional(),
  stream: z.boolean().optional(),
});
type AnthropicRequest = z.infer<typeof requestSchema>;

export function anthropicError(reply: FastifyReply, status: number, message: string) {
  const type = status === 401 ? "authentication_error" : status === 404 ? "not_found_error" : status >= 500 ? "api_error" : "invalid_request_error";
  return reply.code(status).send({ type: "error", error: { type, message } });
}

const blockText = (content: z.infer<typeof block>["content"]) =>
  typeof content === "string" ? content : (content ?? []).map((b) => b.text ?? "").join("\n");

/** Anthropic messages to Orka's; in tool mode the client's tool_use/tool_result history is dropped. */
function toChat(request: AnthropicRequest, keepTools: boolean): ChatMessage[] {
  const messages: ChatMessage[] = [];
  for (const m of request.messages) {
    const blocks = typeof m.content === "string" ? [{ type: "text", text: m.content }] : m.content;
    const text = blocks.filter((b) => b.type === "text").map((b) => b.text ?? "").join("\n");
    if (m.role === "user") {
      if (keepTools) {
        for (const b of blocks.filter((b) => b.type === "tool_result")) {
          messages.push({ role: "tool", toolCallId: b.tool_use_id ?? "", name: "", content: blockText(b.content) });
        }
      }
      if (text) messages.push({ role: "user", content: text });
    } else {
      const toolCalls = keepTools
        ? blocks.filter((b) => b.type === "tool_use").map((b) => ({ id: b.id ?? "", name: b.name ?? "", arguments: JSON.stringify(b.input ?? {}) }))
        : [];
      if (text || toolCalls.length) messages.push({ role: "assistant", content: text, ...(toolCalls.length ? { toolCalls } : {}) });
    }
  }
  return messages;
}

const stopReason = (finish: FinishReason, hasCalls: boolean) =>
  hasCalls ? "tool_use" : finish === "length" ? "max_tokens" : finish === "refusal" ? "refusal" : "end_turn";

function contentBlocks(answer: CompatAnswer) {
  return [
    ...(answer.text ? [{ type: "text", text: answer.text }] : []),
    ...answer.toolCalls.map((c) => ({ type: "tool_use", id: c.id, name: c.name, input: JSON.parse(c.arguments || "{}") })),
  ];
}

export function registerAnthropicCompat(app: FastifyInstance, ctx: ApiContext): void {
  app.get("/models", async (request) => {
    const namespace = resolveNamespace(principalOf(request), (request.query as { namespace?: string }).namespace);
    const models = await listModels(ctx.store, namespace);
    return { data: models.map((m) => ({ type: "model", id: m.id, display_name: m.id, created_at: new Date(m.created * 1000).toISOString() })), has_more: false, first_id: models[0]?.id ?? null, last_id: models.at(-1)?.id ?? null };
  });

  app.post("/messages", async (request, reply) => {
    const parsed = requestSchema.safeParse(request.body ?? {});
    if (!parsed.success) return anthropicError(reply, 400, describeZodError(parsed.error).message);
    const body = parsed.data;
    const passthrough = String(request.headers["x-orka-tools"] ?? "").toLowerCase() === "disabled";
    const system = typeof body.system === "string" ? body.system : (body.system ?? []).map((b) => b.text).join("\n");
    const clientTools: ToolDefinition[] = (body.tools ?? []).map((t) => ({
      name: t.name,
      description: t.description ?? "",
      parameters: t.input_schema ?? { type: "object", properties: {} },
    }));
    const namespace = resolveNamespace(principalOf(request), (request.query as { namespace?: string }).namespace);
    authorizeCompatTools(ctx, request, "createMessage", passthrough, namespace);
    const id = `msg_${randomUUID().replace(/-/g, "")}`;
    const signal = abortWhenClientLeaves(reply);
    const out = heldStream(ctx.gate, reply.raw);
    let run: () => Promise<CompatAnswer>;
    try {
      run = await prepareCompat(ctx, {
        namespace, model: body.model, system, messages: toChat(body, passthrough), maxTokens: body.max_tokens, temperature: body.temperature,
        passthrough, clientTools, signal,
        onProgress: body.stream ? (note) => out.write(sseComment(note)) : undefined,
      });
      if (!body.stream) {
        const answer = await run();
        return {
          id,
          type: "message",
          role: "assistant",
          content: contentBlocks(answer),
          model: body.model,
          stop_reason: stopReason(answer.finish, answer.toolCalls.length > 0),
          stop_sequence: null,
          usage: { input_tokens: answer.usage.inputTokens, output_tokens: answer.usage.outputTokens },
        };
      }
    } catch (err) {
      if (isRequestRefusal(err)) return anthropicError(reply, err.httpStatus, err.message);
      return anthropicError(reply, 502, `completion failed: ${errorMessage(err)}`);
    }

    reply.hijack();
    out.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
    const send = (event: string, data: Record<string, unknown>) => out.write(`event: ${event}\ndata: ${JSON.stringify({ type: event, ...data })}\n\n`);
    // One message spans the whole server-side loop; it starts once the loop is done, so that its
    // usage counts every model turn (progress goes before it as SSE comments).
    let textOpen = false;
    const text = (piece: string) => {
      if (!textOpen) send("content_block_start", { index: 0, content_block: { type: "text", text: "" } });
      textOpen = true;
      send("content_block_delta", { index: 0, delta: { type: "text_delta", text: piece } });
    };
    try {
      const answer = await run();
      send("message_start", {
        message: { id, type: "message", role: "assistant", model: body.model, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: answer.usage.inputTokens, output_tokens: 0 } },
      });
      for (const piece of answer.text.match(/[\s\S]{1,64}/g) ?? []) text(piece);
      let index = textOpen ? 1 : 0;
      if (textOpen) send("content_block_stop", { index: 0 });
      for (const call of answer.toolCalls) {
        send("content_block_start", { index, content_block: { type: "tool_use", id: call.id, name: call.name, input: {} } });
        send("content_block_delta", { index, delta: { type: "input_json_delta", partial_json: call.arguments || "{}" } });
        send("content_block_stop", { index: index++ });
      }
      send("message_delta", { delta: { stop_reason: stopReason(answer.finish, answer.toolCalls.length > 0), stop_sequence: null }, usage: { output_tokens: answer.usage.outputTokens } });
      send("message_stop", {});
    } catch (err) {
      send("error", { error: { type: "api_error", message: isRequestRefusal(err) ? err.message : `completion failed: ${errorMessage(err)}` } });
    }
    out.end();
  });
}
