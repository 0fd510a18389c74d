import type { FastifyError, FastifyReply, FastifyRequest } from "fastify";
import { OrkaError } from "../util/errors.ts";

/** Every API error has one shape: {"error":{"code":<HTTP status>,"message":"…"}}. */
export function sendError(reply: FastifyReply, status: number, message: string): FastifyReply {
  return reply.code(status).send({ error: { code: status, message } });
}

export function errorHandler(error: FastifyError | OrkaError | Error, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  if (error instanceof OrkaError) return sendError(reply, error.httpStatus, error.message);
  const fastifyError = error as FastifyError;
  if (fastifyError.code === "FST_ERR_CTP_BODY_TOO_LARGE") return sendError(reply, 413, "request body is too large");
  if (fastifyError.code === "FST_ERR_CTP_EMPTY_JSON_BODY") return sendError(reply, 400, "empty request body: send a JSON object");
  if (fastifyError.statusCode && fastifyError.statusCode < 500) return sendError(reply, fastifyError.statusCode, error.message);
  request.log.error({ err: error }, "request failed");
  return sendError(reply, 500, "internal error; see the server log");
}
