import pino from "pino";

export type Logger = pino.Logger;

/** Structured logs; fields that could hold credentials are redacted wherever they appear. */
export function createLogger(level = process.env.ORKA_LOG_LEVEL ?? "info"): Logger {
  return pino({
    level,
    redact: {
      paths: ["req.headers.authorization", "headers.authorization", "*.token", "*.apiKey", "*.env", "token", "apiKey", "env"],
      censor: "[redacted]",
    },
  });
}
