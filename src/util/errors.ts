/**
 * The one error type of Orka: a code mapped once to an HTTP status, and a message that says what to do.
 * Every error Orka raises is an OrkaError; a subclass (ModelApiError, EgressRefused, …) exists only
 * where it carries more data or a caller tells it apart by type.
 *
 * Each code's HTTP status, as google.rpc.Code maps them. Where two codes share a status, the one
 * listed first is the code that status maps back to (`errorCodeOfStatus`).
 */
const httpStatusByCode = {
  /** The request itself is wrong, whatever the state of the system: fix the request. */
  invalid_argument: 400,
  /** The request is fine but the system is not set up for it (a missing key, a directory where a file should be). */
  failed_precondition: 400,
  unauthenticated: 401,
  permission_denied: 403,
  not_found: 404,
  conflict: 409,
  already_exists: 409,
  payload_too_large: 413,
  uri_too_long: 414,
  unsupported_media_type: 415,
  /** A limit or quota is used up: a rate limit, a file that may grow no further. */
  resource_exhausted: 429,
  /** A fault of Orka itself: logged, and never explained to a caller. */
  internal: 500,
  /** Something Orka depends on cannot be reached or did not answer usefully; trying again may help. */
  unavailable: 503,
  /** The time allowed ran out before an answer came. */
  deadline_exceeded: 504,
} as const;

export type ErrorCode = keyof typeof httpStatusByCode;

export const ERROR_CODES = Object.keys(httpStatusByCode) as ErrorCode[];

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === "string" && Object.hasOwn(httpStatusByCode, value);
}

export class OrkaError extends Error {
  readonly code: ErrorCode;
  readonly field?: string;

  constructor(code: ErrorCode, message: string, details: { field?: string } = {}) {
    super(message);
    this.name = new.target.name;
    this.code = code;
    this.field = details.field;
  }

  get httpStatus(): number {
    return httpStatusByCode[this.code];
  }
}

export function httpStatusOf(code: ErrorCode): number {
  return httpStatusByCode[code];
}

/** The code behind an HTTP status another Orka process answered with, so its meaning survives the hop. */
export function errorCodeOfStatus(status: number): ErrorCode {
  return ERROR_CODES.find((code) => httpStatusByCode[code] === status) ?? (status >= 500 ? "unavailable" : "invalid_argument");
}

/**
 * The code behind a status a dependency outside Orka answered (a model provider, an HTTP Tool's
 * endpoint): its refusal for a 4xx; anything else, or no answer at all, means it did not serve.
 */
export function errorCodeOfDependency(status: number | undefined): ErrorCode {
  return status !== undefined && status >= 400 && status < 500 ? errorCodeOfStatus(status) : "unavailable";
}

/**
 * The error an Orka server answered with (`{"error":{"code","message"}}`) as an OrkaError: its code
 * when the body names one, else the status's; its message, else the body, else `fallback`.
 */
export function errorFromAnswer(status: number, body: string, fallback: string): OrkaError {
  let said: { code?: unknown; message?: unknown } | undefined;
  try {
    said = (JSON.parse(body) as { error?: typeof said } | null)?.error;
  } catch {
    // not JSON: the body is the message
  }
  const named = said?.code;
  const message = typeof said?.message === "string" ? said.message : body;
  return new OrkaError(isErrorCode(named) ? named : errorCodeOfStatus(status), message || fallback);
}

/** The code an error carries: its own when it is an OrkaError, else `fallback` (for errors of libraries and the platform). */
export function codeOf(err: unknown, fallback: ErrorCode): ErrorCode {
  return err instanceof OrkaError ? err.code : fallback;
}

export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
