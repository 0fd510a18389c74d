import type { FastifyInstance, FastifyRequest } from "fastify";
import { OrkaError } from "../util/errors.ts";
import { MAX_JSON_DEPTH, nestsDeeperThan } from "../util/deep-json.ts";

/** The server's body limit, for a route that sets none of its own, whichever way its request comes. */
export const MAX_REQUEST_BODY_BYTES = 12 * 1024 * 1024;

/** Fastify's JSON parser (with its prototype-poisoning guard), refusing bodies nested more than MAX_JSON_DEPTH levels. */
export function registerJsonParser(app: FastifyInstance): void {
  const parseJson = jsonBodyParser(app);
  app.removeContentTypeParser("application/json");
  app.addContentTypeParser("application/json", { parseAs: "string" }, (_request, body, done) => {
    try {
      done(null, parseJson(body as string));
    } catch (err) {
      done(err as Error, undefined);
    }
  });
}

/** The JSON body rule as a function, for a body that reaches the routes without an HTTP request (a pooled worker's call). */
export function jsonBodyParser(app: FastifyInstance): (text: string) => unknown {
  // Fastify's parser answers at once, through its callback; it does not look at the request.
  const parseJson = app.getDefaultJsonParser("error", "error") as (request: never, body: string, done: (err: Error | null, value?: unknown) => void) => void;
  return (text) => {
    let parsed: { err: Error | null; value: unknown } = { err: null, value: undefined };
    parseJson(undefined as never, text, (err, value) => (parsed = { err, value }));
    if (parsed.err) throw parsed.err;
    if (nestsDeeperThan(parsed.value, MAX_JSON_DEPTH)) {
      throw new OrkaError("invalid_argument", `request body nests objects or arrays more than ${MAX_JSON_DEPTH} levels deep; flatten it`);
    }
    return parsed.value;
  };
}

/** A request body of the REST API is a JSON object: null, arrays and scalars would replace an object with nothing. */
export async function refuseNonObjectBody(request: FastifyRequest): Promise<void> {
  const body = request.body;
  if (body === undefined || (typeof body === "object" && body !== null && !Array.isArray(body))) return;
  const got = body === null ? "null" : Array.isArray(body) ? "an array" : `a ${typeof body}`;
  throw new OrkaError("invalid_argument", `request body must be a JSON object, not ${got}`);
}

/** `?namespace=a&namespace=b` would reach handlers as an array; every parameter is given once. */
export async function refuseRepeatedQuery(request: Pick<FastifyRequest, "query">): Promise<void> {
  const repeated = Object.entries((request.query ?? {}) as Record<string, unknown>)
    .filter(([, value]) => Array.isArray(value))
    .map(([name]) => `"${name}"`);
  if (repeated.length > 0) {
    throw new OrkaError("invalid_argument", `query parameter ${repeated.join(", ")} is given more than once; give each parameter once`);
  }
}
