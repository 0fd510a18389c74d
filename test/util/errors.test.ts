import { describe, expect, it } from "vitest";
import { EgressRefused } from "../../src/policy/ssrf.ts";
import { ModelApiError, type ModelClient } from "../../src/providers/model.ts";
import { withRetries } from "../../src/providers/retry.ts";
import { SandboxUnavailableError } from "../../src/sandbox/bwrap.ts";
import {
  codeOf,
  ERROR_CODES,
  errorCodeOfDependency,
  errorCodeOfStatus,
  errorFromAnswer,
  httpStatusOf,
  isErrorCode,
  OrkaError,
  type ErrorCode,
} from "../../src/util/errors.ts";

// Each status and the codes answered with it, the one the status maps back to first. A code added or a status changed shows here.
const CODES_BY_STATUS: [number, ErrorCode[]][] = [
  [400, ["invalid_argument", "failed_precondition"]], [401, ["unauthenticated"]], [403, ["permission_denied"]], [404, ["not_found"]],
  [409, ["conflict", "already_exists"]], [413, ["payload_too_large"]], [414, ["uri_too_long"]], [415, ["unsupported_media_type"]],
  [429, ["resource_exhausted"]], [500, ["internal"]], [503, ["unavailable"]], [504, ["deadline_exceeded"]],
];
const STATUS = Object.fromEntries(CODES_BY_STATUS.flatMap(([status, codes]) => codes.map((code) => [code, status]))) as Record<ErrorCode, number>;

describe("error codes and HTTP statuses", () => {
  it("maps every code to its status, and the status back to the code", () => {
    expect([...ERROR_CODES].sort()).toEqual(Object.keys(STATUS).sort());
    for (const [status, codes] of CODES_BY_STATUS) {
      for (const code of codes) expect([httpStatusOf(code), new OrkaError(code, "x").httpStatus], code).toEqual([status, status]);
      expect(errorCodeOfStatus(status), String(status)).toBe(codes[0]);
    }
  });

  it("reads every status the server answers as the code behind it", () => {
    const answered: [number, ErrorCode][] = [
      [400, "invalid_argument"], [401, "unauthenticated"], [403, "permission_denied"], [404, "not_found"], [409, "conflict"],
      [413, "payload_too_large"], [414, "uri_too_long"], [415, "unsupported_media_type"], [429, "resource_exhausted"],
      [500, "internal"], [502, "unavailable"], [503, "unavailable"], [504, "deadline_exceeded"],
      // statuses no code names: a refusal, or an outage
      [405, "invalid_argument"], [422, "invalid_argument"], [599, "unavailable"],
    ];
    expect(answered.map(([status]) => [status, errorCodeOfStatus(status)])).toEqual(answered);
  });

  it("reads what a dependency answered as its refusal for a 4xx, else as unavailable", () => {
    expect([400, 401, 404, 429, 200, 302, 500, 529, undefined].map(errorCodeOfDependency)).toEqual([
      "invalid_argument", "unauthenticated", "not_found", "resource_exhausted", "unavailable", "unavailable", "unavailable", "unavailable", "unavailable",
    ]);
  });

  it("knows its codes, and keeps an error's own code when wrapping it", () => {
    expect([isErrorCode("not_found"), isErrorCode("toString"), isErrorCode(404), isErrorCode(undefined)]).toEqual([true, false, false, false]);
    expect(codeOf(new OrkaError("not_found", "x"), "unavailable")).toBe("not_found");
    expect(codeOf(new TypeError("x"), "unavailable")).toBe("unavailable");
  });
});

describe("an Orka server's error answer", () => {
  const read = (status: number, body: string) => {
    const err = errorFromAnswer(status, body, `HTTP ${status}`);
    return [err instanceof OrkaError, err.code, err.message];
  };

  it("keeps the message, and the code the body names, else the status's", () => {
    expect(read(404, JSON.stringify({ error: { code: 404, message: 'task "t" not found' } }))).toEqual([true, "not_found", 'task "t" not found']);
    expect(read(400, JSON.stringify({ error: { code: "failed_precondition", message: "set a key" } }))).toEqual([true, "failed_precondition", "set a key"]);
    expect(read(400, JSON.stringify({ error: { code: "no_such_code", message: "m" } }))).toEqual([true, "invalid_argument", "m"]);
  });

  it("takes a body that is no error answer as the message, and an empty one as the fallback", () => {
    expect(read(502, "<html>bad gateway</html>")).toEqual([true, "unavailable", "<html>bad gateway</html>"]);
    expect(read(409, "null")).toEqual([true, "conflict", "null"]);
    expect(read(503, "")).toEqual([true, "unavailable", "HTTP 503"]);
  });
});

describe("the errors that carry more than a code", () => {
  it("are OrkaErrors, with their own names and codes", () => {
    const cases: [OrkaError, string, ErrorCode][] = [
      [new EgressRefused("URL must have a host"), "EgressRefused", "permission_denied"],
      [new SandboxUnavailableError("bubblewrap is not installed"), "SandboxUnavailableError", "unavailable"],
      [new ModelApiError("provider returned HTTP 429: slow down", 429), "ModelApiError", "resource_exhausted"],
    ];
    for (const [err, name, code] of cases) {
      expect(err, name).toBeInstanceOf(OrkaError);
      expect([err.name, err.code, err.httpStatus], name).toEqual([name, code, STATUS[code]]);
    }
  });

  it("gives a failed model call the provider's refusal, else unavailable, and keeps its retry data", () => {
    const codes = [400, 401, 403, 404, 429, 500, 503, 529, 200, undefined].map((status) => new ModelApiError("m", status).code);
    expect(codes).toEqual([
      "invalid_argument", "unauthenticated", "permission_denied", "not_found", "resource_exhausted", "unavailable", "unavailable", "unavailable", "unavailable", "unavailable",
    ]);
    const limited = new ModelApiError("m", 429, { retryAfterMs: 2000 });
    expect([limited.status, limited.retryAfterMs, limited.retryable]).toEqual([429, 2000, true]);
  });

  it("calls a provider that stays silent past the deadline deadline_exceeded", async () => {
    const silent: ModelClient = { provider: "test", complete: () => new Promise<never>(() => {}) };
    const call = withRetries(silent, { baseDelayMs: 1, timeoutMs: 20 }).complete({ model: "m", messages: [], tools: [], maxTokens: 10 });
    const err = await call.then(() => undefined, (reason: unknown) => reason);
    expect(err).toBeInstanceOf(ModelApiError);
    expect((err as ModelApiError).code).toBe("deadline_exceeded");
  });
});
