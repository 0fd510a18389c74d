import type { FastifyError, FastifyReply, FastifyRequest } from "fastify";
import { OrkaError } from "../util/errors.ts";
import { storeWriteFailure } from "../store/sqlite/db.ts";
import { MAX_NAME_LENGTH } from "../resources/meta.ts";

/** How a surface answers an error: the API's shape, or a compatible protocol's. */
export type ErrorReply = (reply: FastifyReply, status: number, message: string) => FastifyReply;

/** How a surface answers an error a request failed on. */
export type ErrorAnswer = (error: Error, request: FastifyRequest, reply: FastifyReply) => FastifyReply;

/** Every API error has one shape: {"error":{"code":<HTTP status>,"message":"…"}}. */
export function errorBody(status: number, message: string) {
  return { error: { code: status, message } };
}

export function sendError(reply: FastifyReply, status: number, message: string): FastifyReply {
  return reply.code(status).send(errorBody(status, message));
}

/** What explaining an error needs of the request it failed: the media type it was sent as, and where to log. */
export type ErrorSource = Pick<FastifyRequest, "log"> & { headers: { "content-type"?: string } };

/** Fastify's own refusals, in words that say what to send instead. */
const FRAMEWORK_ERRORS: Record<string, (request: ErrorSource) => OrkaError> = {
  FST_ERR_CTP_BODY_TOO_LARGE: () => new OrkaError("payload_too_large", "request body is too large"),
  FST_ERR_CTP_EMPTY_JSON_BODY: () => new OrkaError("invalid_argument", "empty request body: send a JSON object"),
  FST_ERR_CTP_INVALID_MEDIA_TYPE: (request) =>
    new OrkaError(
      "unsupported_media_type",
      `content type "${request.headers["content-type"] ?? "(none)"}" is not accepted: send a JSON object with Content-Type: application/json`,
    ),
  FST_ERR_MAX_PARAM_LENGTH: () => new OrkaError("uri_too_long", `a segment of the URL path is too long (object names are at most ${MAX_NAME_LENGTH} characters)`),
  FST_ERR_BAD_URL: () => new OrkaError("invalid_argument", "the URL path is not valid percent-encoding"),
};

/**
 * The error as an OrkaError when we can explain it: Fastify's refusals, and a store that cannot be
 * written (503, with the SQLite detail logged rather than returned). Anything else stays as it is.
 */
export function knownError(error: Error, request: ErrorSource): Error {
  if (error instanceof OrkaError) return error;
  const framework = FRAMEWORK_ERRORS[(error as FastifyError).code]?.(request);
  if (framework) return framework;
  const storeFailure = storeWriteFailure(error);
  if (storeFailure) request.log.error({ err: error }, "store write failed");
  return storeFailure ?? error;
}

/** What an error is answered with: what we can explain with its status, anything else logged and answered 500. */
export function apiError(thrown: Error, request: ErrorSource): { status: number; message: string } {
  const error = knownError(thrown, request);
  // An internal error is a fault of Orka itself: logged like any unexplained one, its detail never answered.
  if (error instanceof OrkaError && error.code !== "internal") return { status: error.httpStatus, message: error.message };
  const statusCode = (error as FastifyError).statusCode;
  if (statusCode && statusCode < 500) return { status: statusCode, message: error.message };
  request.log.error({ err: error }, "request failed");
  return { status: 500, message: "internal error; see the server log" };
}

/** The Orka API's answer to an error, in its one shape. */
export const apiErrorAnswer: ErrorAnswer = (thrown, request, reply) => {
  const { status, message } = apiError(thrown, request);
  return sendError(reply, status, message);
};

/** A compatible protocol's answer: the error's status and message in the protocol's shape, an unexpected one as "internal error". */
export function protocolErrorAnswer(errorReply: ErrorReply): ErrorAnswer {
  return (thrown, request, reply) => {
    const error = knownError(thrown, request);
    const status = error instanceof OrkaError ? error.httpStatus : ((error as FastifyError).statusCode ?? 500);
    if (status !== 500) return errorReply(reply, status, error.message);
    request.log.error({ err: error }, "request failed");
    return errorReply(reply, 500, "internal error");
  };
}

/** A path no route of the surface serves: a 404 in the surface's shape. */
export function notFound(errorReply: ErrorReply): (request: FastifyRequest, reply: FastifyReply) => FastifyReply {
  return (request, reply) => errorReply(reply, 404, `no route for ${request.method} ${request.url.split("?")[0]}`);
}
