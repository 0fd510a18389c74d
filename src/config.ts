import { availableParallelism, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { z } from "zod";
import { parseWith } from "./resources/validate.ts";
import { SEARCH_PROVIDERS, type SearchProvider } from "./tools/core/web-search.ts";

/** Server settings, read once at start-up from the environment (and CLI flags, which win). */
export interface ServerConfig {
  host: string;
  port: number;
  dataDir: string;
  /** Per-attempt workspaces; outside the (private) data dir so the sandbox user can reach them. */
  workDir: string;
  adminToken?: string;
  /** Attempts that may run at once. */
  workerSlots: number;
  /** Worker processes in the local pool. */
  workerProcesses: number;
  maxActivePerNamespace: number;
  modelRetryBaseMs: number;
  /** Lets webhooks and web_fetch reach loopback; for local testing only. */
  allowLoopbackEgress: boolean;
  webFetchTimeoutMs: number;
  search: { provider: SearchProvider; url?: string; secret?: string };
  /** Where the CLI config is written when an admin token is generated; "" disables it. */
  cliConfigPath: string;
  logLevel: string;
}

const intText = (name: string, min: number) =>
  z.coerce.number({ message: `${name} must be a number` }).int(`${name} must be an integer`).min(min, `${name} must be at least ${min}`);

const envSchema = z.object({
  ORKA_HOST: z.string().min(1).default("127.0.0.1"),
  ORKA_PORT: intText("ORKA_PORT", 0).max(65535, "ORKA_PORT must be at most 65535").default(8080),
  ORKA_DATA_DIR: z.string().min(1).default("./.orka"),
  ORKA_WORK_DIR: z.string().min(1).optional(),
  ORKA_ADMIN_TOKEN: z.string().min(16, "ORKA_ADMIN_TOKEN must be at least 16 characters").optional(),
  ORKA_WORKER_SLOTS: intText("ORKA_WORKER_SLOTS", 1).default(4),
  ORKA_WORKER_PROCESSES: intText("ORKA_WORKER_PROCESSES", 1).default(Math.max(1, Math.min(availableParallelism(), 8))),
  ORKA_MAX_ACTIVE_TASKS_PER_NAMESPACE: intText("ORKA_MAX_ACTIVE_TASKS_PER_NAMESPACE", 0).default(0),
  ORKA_MODEL_RETRY_BASE_MS: intText("ORKA_MODEL_RETRY_BASE_MS", 0).default(1000),
  ORKA_CLI_CONFIG: z.string().optional(),
  ORKA_WEB_FETCH_TIMEOUT_MS: intText("ORKA_WEB_FETCH_TIMEOUT_MS", 100).default(60_000),
  ORKA_SEARCH_PROVIDER: z.enum(SEARCH_PROVIDERS, { message: `ORKA_SEARCH_PROVIDER must be one of ${SEARCH_PROVIDERS.join(", ")}` }).default("duckduckgo"),
  ORKA_SEARCH_URL: z.url({ message: "ORKA_SEARCH_URL must be an http(s) URL" }).optional(),
  ORKA_SEARCH_SECRET: z.string().min(1).optional(),
  ORKA_ALLOW_LOOPBACK_EGRESS: z.enum(["true", "false"], { message: "ORKA_ALLOW_LOOPBACK_EGRESS must be true or false" }).default("false"),
  ORKA_LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
});

export function serverConfigFrom(env: Record<string, string | undefined>, homeDir: string): ServerConfig {
  const cleaned = Object.fromEntries(Object.entries(env).filter(([k, v]) => k.startsWith("ORKA_") && v !== ""));
  const parsed = parseWith(envSchema, cleaned);
  return {
    host: parsed.ORKA_HOST,
    port: parsed.ORKA_PORT,
    dataDir: resolve(parsed.ORKA_DATA_DIR),
    workDir: resolve(parsed.ORKA_WORK_DIR ?? join(tmpdir(), `orka-work-${process.getuid?.() ?? "user"}`)),
    adminToken: parsed.ORKA_ADMIN_TOKEN,
    workerSlots: parsed.ORKA_WORKER_SLOTS,
    workerProcesses: parsed.ORKA_WORKER_PROCESSES,
    maxActivePerNamespace: parsed.ORKA_MAX_ACTIVE_TASKS_PER_NAMESPACE,
    modelRetryBaseMs: parsed.ORKA_MODEL_RETRY_BASE_MS,
    allowLoopbackEgress: parsed.ORKA_ALLOW_LOOPBACK_EGRESS === "true",
    webFetchTimeoutMs: parsed.ORKA_WEB_FETCH_TIMEOUT_MS,
    search: { provider: parsed.ORKA_SEARCH_PROVIDER, url: parsed.ORKA_SEARCH_URL, secret: parsed.ORKA_SEARCH_SECRET },
    cliConfigPath: parsed.ORKA_CLI_CONFIG ?? resolve(homeDir, ".orka", "config.yaml"),
    logLevel: parsed.ORKA_LOG_LEVEL,
  };
}
