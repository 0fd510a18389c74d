import type { FastifyInstance, FastifyRequest } from "fastify";
import { OrkaError } from "../util/errors.ts";
import { MAX_JSON_DEPTH, nestsDeeperThan } from "../util/deep-json.ts";

/** Fastify's JSON parser (with its prototype-poisoning guard), refusing bodies nested more than MAX_JSON_DEPTH levels. */
export function registerJsonParser(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser("error", "error");
  app.removeContentTypeParser("application/json");
  app.addContentTypeParser("application/json", { parseAs: "string" }, (request, body, done) => {
    parseJson(request, body as string, (err, value) => {
      if (err) return done(err, undefined);
      if (nestsDeeperThan(value, MAX_JSON_DEPTH)) {
        return done(new OrkaError("invalid_argument", `request body nests objects or arrays more than ${MAX_JSON_DEPTH} levels deep; flatten it`), undefined);
      }
      done(null, value);
    });
  });
}

/** A request body of the REST API is a JSON object: null, arrays and scalars would replace an object with nothing. */
export async function refuseNonObjectBody(request: FastifyRequest): Promise<void> {
  const body = request.body;
  if (body === undefined || (typeof body === "object" && body !== null && !Array.isArray(body))) return;
  const got = body === null ? "null" : Array.isArray(body) ? "an array" : `a ${typeof body}`;
  throw new OrkaError("invalid_argument", `request body must be a JSON object, not ${got}`);
}

/** `?namespace=a&namespace=b` would reach handlers as an array; every parameter is given once. */
export async function refuseRepeatedQuery(request: FastifyRequest): Promise<void> {
  const repeated = Object.entries((request.query ?? {}) as Record<string, unknown>)
    .filter(([, value]) => Array.isArray(value))
    .map(([name]) => `"${name}"`);
  if (repeated.length > 0) {
    throw new OrkaError("invalid_argument", `query parameter ${repeated.join(", ")} is given more than once; give each parameter once`);
  }
}
