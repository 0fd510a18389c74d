/** The one error type of Orka: a code mapped once to an HTTP status, and a message that says what to do. */
export type ErrorCode =
  | "invalid_argument"
  | "unauthenticated"
  | "permission_denied"
  | "not_found"
  | "already_exists"
  | "conflict"
  | "payload_too_large"
  | "unsupported_media_type"
  | "uri_too_long"
  | "unavailable"
  | "internal";

const httpStatusByCode: Record<ErrorCode, number> = {
  invalid_argument: 400,
  unauthenticated: 401,
  permission_denied: 403,
  not_found: 404,
  already_exists: 409,
  conflict: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  uri_too_long: 414,
  unavailable: 503,
  internal: 500,
};

export class OrkaError extends Error {
  readonly code: ErrorCode;
  readonly field?: string;

  constructor(code: ErrorCode, message: string, details: { field?: string } = {}) {
    super(message);
    this.name = "OrkaError";
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
  if (status === 409) return "conflict";
  const code = (Object.keys(httpStatusByCode) as ErrorCode[]).find((candidate) => httpStatusByCode[candidate] === status);
  return code ?? (status >= 500 ? "unavailable" : "invalid_argument");
}

export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
