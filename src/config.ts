import { isIP } from "node:net";
import { availableParallelism, tmpdir } from "node:os";
import { existsSync } from "node:fs";
import { isAbsolute, join, resolve, sep } from "node:path";
import { z } from "zod";
import { parseWith } from "./resources/validate.ts";
import { SEARCH_PROVIDERS, type GithubToolSettings, type SearchProvider } from "./tools/settings.ts";
import { DEFAULT_NAMESPACE, namespaceName } from "./resources/meta.ts";
import { OrkaError } from "./util/errors.ts";
import { TOKEN_ROLES } from "./auth/principal.ts";
import { GRANT_MODES, type TransactionTokenConfig } from "./auth/transaction-token.ts";
import type { OidcConfig } from "./auth/oidc.ts";
import type { NamespaceIsolation } from "./auth/isolation.ts";
import type { SignInLimit, TrustProxy } from "./api/auth.ts";
import { isDuration, parseDuration } from "./util/duration.ts";
import type { TokenReviewConfig } from "./auth/token-review.ts";
import type { ChildTokenExchangeConfig } from "./auth/token-exchange.ts";
import type { ModelCallSettings } from "./providers/model.ts";
import { githubSettings, type GithubSettings } from "./github/settings.ts";
import { DEFAULT_GIT_SETTINGS, type GitSettings } from "./workspace/git.ts";
import { RUNTIME_TYPES, type RuntimeType } from "./resources/agent.ts";

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
  /** Retry backoff, and how long one model call may take unless its Provider or Agent sets `timeout`. */
  modelCalls: ModelCallSettings;
  /** Lets webhooks, web_fetch and HTTP Tools reach loopback; for local testing only. */
  allowLoopbackEgress: boolean;
  /** The only directory a scripted Provider's `file` may be in; unset, no file may be named. */
  scriptedDir?: string;
  /** Installed stdio MCP servers, seen read-only at /mcp-servers in the sandbox their Tools' commands run in. */
  mcpServersDir?: string;
  webFetchTimeoutMs: number;
  search: { provider: SearchProvider; url?: string; secret?: string };
  /** Where the CLI config is written when an admin token is generated; "" disables it. */
  cliConfigPath: string;
  logLevel: string;
  auth: AuthConfig;
  audit: AuditRetention;
  github: GithubSettings;
  /** Workspace repositories: the hosts they may be on, and the git config file the operator adds. */
  git: GitSettings;
  /** What the GitHub tools' worker halves need: auto_merge_pull_request's poll interval (30 s; tests shorten it). */
  githubTools: GithubToolSettings;
  /** The operator's replacement of a coding CLI's command (`ORKA_RUNTIME_COMMAND_<RUNTIME>`); absent: the pinned CLI. */
  runtimeCommands: RuntimeCommands;
  /** Where the pinned coding CLIs are installed on first use (`ORKA_RUNTIME_CACHE`, default `<data dir>/runtimes`). */
  runtimeCacheDir: string;
  /** Host paths every coding CLI's sandbox may read, read-only at the same paths (`ORKA_RUNTIME_READ_PATHS`): what a replacement command needs. */
  runtimeReadPaths: string[];
}

export type RuntimeCommands = Partial<Record<RuntimeType, string[]>>;

/** How long refused requests are kept in the audit log, and how many rows at most. */
export interface AuditRetention {
  maxAgeMs: number;
  maxRows: number;
}

/** How callers other than static-token holders prove who they are, and what transaction tokens may do. */
export interface AuthConfig {
  isolation: NamespaceIsolation;
  signInLimit: SignInLimit;
  /** Whose `X-Forwarded-For` names the client the limiter and the audit log count. */
  trustProxy: TrustProxy;
  transaction?: TransactionTokenConfig;
  oidc?: OidcConfig;
  tokenReview?: TokenReviewConfig;
  childTokenExchange?: ChildTokenExchangeConfig;
}

const TXN_HEADERS = ["Txn-Token", "Authorization:Bearer"];
const csv = (text: string) => text.split(",").map((v) => v.trim()).filter(Boolean);

const intText = (name: string, min: number) =>
  z.coerce.number({ message: `${name} must be a number` }).int(`${name} must be an integer`).min(min, `${name} must be at least ${min}`);

const PROXY_RANGE_NAMES = new Set(["loopback", "linklocal", "uniquelocal"]);

function isProxyAddress(entry: string): boolean {
  if (PROXY_RANGE_NAMES.has(entry)) return true;
  const [address, prefix, ...rest] = entry.split("/");
  const version = isIP(address);
  if (version === 0 || rest.length > 0) return false;
  return prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= (version === 4 ? 32 : 128));
}

const trustProxyText = z.string().transform((text, ctx): TrustProxy => {
  if (text === "true" || text === "false") return text === "true";
  const entries = csv(text);
  const wrong = entries.find((entry) => !isProxyAddress(entry));
  if (entries.length > 0 && wrong === undefined) return entries;
  ctx.addIssue({
    code: "custom",
    message: `"${wrong ?? text}" is not a proxy address: use true (every proxy), or the proxies' addresses and CIDR ranges such as 10.0.0.0/8,127.0.0.1`,
  });
  return z.NEVER;
});

const durationText = (name: string, example: string) =>
  z.string().refine((text) => isDuration(text) && parseDuration(text) > 0, { message: `${name} must be a positive duration such as ${example}` });

const runtimeCommandVariable = (runtime: RuntimeType) => `ORKA_RUNTIME_COMMAND_${runtime.toUpperCase() as Uppercase<RuntimeType>}` as const;

/** A command as a JSON array of strings, so arguments with spaces need no shell quoting. */
const runtimeCommandText = (name: string) =>
  z.string().transform((text, ctx) => {
    const parsed = z.array(z.string().min(1)).min(1).safeParse(parseJsonOr(text));
    if (parsed.success) return parsed.data;
    ctx.addIssue({ code: "custom", message: `${name} must be a JSON array of non-empty strings, the command and its arguments, such as ["node","/opt/fake-cli.mjs"]` });
    return z.NEVER;
  });

/** Absolute paths of existing files or directories, comma-separated. */
const readPathsText = z.string().transform((text, ctx) => {
  const paths = csv(text);
  const wrong = paths.find((path) => !isAbsolute(path) || !existsSync(path));
  if (wrong === undefined) return paths.map((path) => resolve(path));
  ctx.addIssue({ code: "custom", message: `ORKA_RUNTIME_READ_PATHS holds "${wrong}", which is not an existing absolute path: list the absolute paths, comma-separated, of what a runtime's replacement command reads (such as /opt/cli/node_modules)` });
  return z.NEVER;
});

function parseJsonOr(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

const envSchema = z.object({
  ORKA_HOST: z.string().min(1).default("127.0.0.1"),
  ORKA_PORT: intText("ORKA_PORT", 0).max(65535, "ORKA_PORT must be at most 65535").default(8080),
  ORKA_DATA_DIR: z.string().min(1).default("./.orka"),
  ORKA_RUNTIME_CACHE: z.string().min(1).optional(),
  ORKA_RUNTIME_READ_PATHS: readPathsText.default([]),
  ORKA_WORK_DIR: z.string().min(1).optional(),
  ORKA_GIT_HOSTS: z.string().default(DEFAULT_GIT_SETTINGS.allowedHosts.join(",")),
  ORKA_GIT_CONFIG: z.string().min(1).optional(),
  ORKA_ADMIN_TOKEN: z.string().min(16, "ORKA_ADMIN_TOKEN must be at least 16 characters").optional(),
  ORKA_WORKER_SLOTS: intText("ORKA_WORKER_SLOTS", 1).default(4),
  // The server process is busy itself (every step of every attempt goes through it): the workers get the other cores.
  ORKA_WORKER_PROCESSES: intText("ORKA_WORKER_PROCESSES", 1).default(Math.max(1, Math.min(availableParallelism() - 1, 8))),
  ORKA_MAX_ACTIVE_TASKS_PER_NAMESPACE: intText("ORKA_MAX_ACTIVE_TASKS_PER_NAMESPACE", 0).default(0),
  ORKA_MODEL_RETRY_BASE_MS: intText("ORKA_MODEL_RETRY_BASE_MS", 0).default(1000),
  ORKA_MODEL_TIMEOUT_MS: intText("ORKA_MODEL_TIMEOUT_MS", 100).max(86_400_000, "ORKA_MODEL_TIMEOUT_MS must be at most 86400000 (a day)").default(120_000),
  ORKA_CLI_CONFIG: z.string().optional(),
  ORKA_WEB_FETCH_TIMEOUT_MS: intText("ORKA_WEB_FETCH_TIMEOUT_MS", 100).default(60_000),
  ORKA_SEARCH_PROVIDER: z.enum(SEARCH_PROVIDERS, { message: `ORKA_SEARCH_PROVIDER must be one of ${SEARCH_PROVIDERS.join(", ")}` }).default("duckduckgo"),
  ORKA_SEARCH_URL: z.url({ message: "ORKA_SEARCH_URL must be an http(s) URL" }).optional(),
  ORKA_SEARCH_SECRET: z.string().min(1).optional(),
  ORKA_ALLOW_LOOPBACK_EGRESS: z.enum(["true", "false"], { message: "ORKA_ALLOW_LOOPBACK_EGRESS must be true or false" }).default("false"),
  ORKA_SCRIPTED_DIR: z.string().min(1).optional(),
  ORKA_MCP_SERVERS_DIR: z.string().min(1).optional(),
  ORKA_LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  ORKA_WATCH_NAMESPACE: namespaceName.optional(),
  ORKA_ENFORCE_NAMESPACE_ISOLATION: z.enum(["true", "false"], { message: "ORKA_ENFORCE_NAMESPACE_ISOLATION must be true or false" }).default("false"),
  ORKA_TXN_TOKEN_ISSUER: z.url({ message: "ORKA_TXN_TOKEN_ISSUER must be the issuer URL" }).optional(),
  ORKA_TXN_TOKEN_AUDIENCE: z.string().min(1).optional(),
  ORKA_TXN_TOKEN_JWKS_URL: z.url({ message: "ORKA_TXN_TOKEN_JWKS_URL must be an http(s) URL" }).optional(),
  ORKA_TXN_TOKEN_HEADERS: z.string().default("Txn-Token").refine((v) => csv(v).every((h) => TXN_HEADERS.includes(h)), {
    message: `ORKA_TXN_TOKEN_HEADERS is a comma-separated list of ${TXN_HEADERS.join(" and ")}`,
  }),
  ORKA_TXN_TOKEN_MODE: z.enum(GRANT_MODES, { message: "ORKA_TXN_TOKEN_MODE must be off, audit or enforce" }).default("off"),
  ORKA_TXN_TOKEN_SCOPES: z.string().optional(),
  ORKA_OIDC_ISSUER: z.url({ message: "ORKA_OIDC_ISSUER must be the issuer URL" }).optional(),
  ORKA_OIDC_AUDIENCE: z.string().min(1).optional(),
  ORKA_OIDC_JWKS_URL: z.url({ message: "ORKA_OIDC_JWKS_URL must be an http(s) URL" }).optional(),
  ORKA_OIDC_SUBJECTS: z.string().default(""),
  ORKA_OIDC_NAMESPACE: namespaceName.default(DEFAULT_NAMESPACE),
  ORKA_OIDC_ROLE: z.enum(TOKEN_ROLES, { message: `ORKA_OIDC_ROLE must be one of ${TOKEN_ROLES.join(", ")}` }).default("user"),
  ORKA_TOKEN_REVIEW: z.enum(["true", "false"], { message: "ORKA_TOKEN_REVIEW must be true or false" }).default("false"),
  ORKA_KUBECONFIG: z.string().min(1).optional(),
  ORKA_TOKEN_REVIEW_AUDIENCES: z.string().default(""),
  ORKA_CONTEXT_TOKEN_TTS_ENDPOINT: z.url({ message: "ORKA_CONTEXT_TOKEN_TTS_ENDPOINT must be an http(s) URL" }).optional(),
  ORKA_CONTEXT_TOKEN_TTS_AUDIENCE: z.string().min(1).optional(),
  ORKA_CONTEXT_TOKEN_SUBJECT_TOKEN_FILE: z.string().min(1).optional(),
  ORKA_CONTEXT_TOKEN_CHILD_SCOPE: z.string().optional(),
  ORKA_AUTH_FAILURE_LIMIT: intText("ORKA_AUTH_FAILURE_LIMIT", 1).default(30),
  ORKA_AUTH_FAILURE_WINDOW: durationText("ORKA_AUTH_FAILURE_WINDOW", "1m").default("1m"),
  ORKA_AUDIT_RETENTION: durationText("ORKA_AUDIT_RETENTION", "720h").default("720h"),
  ORKA_AUDIT_MAX_ROWS: intText("ORKA_AUDIT_MAX_ROWS", 1).default(100_000),
  ORKA_TRUST_PROXY: trustProxyText.default(false),
  ORKA_GITHUB_AUTO_MERGE_POLL_INTERVAL: durationText("ORKA_GITHUB_AUTO_MERGE_POLL_INTERVAL", "30s").default("30s"),
  ORKA_GITHUB_API_BASE_URL: z.url({ protocol: /^https?$/, message: "ORKA_GITHUB_API_BASE_URL must be an http(s) URL such as https://ghe.example.com/api/v3" }).optional(),
  ORKA_GITHUB_RETRY_BASE_MS: intText("ORKA_GITHUB_RETRY_BASE_MS", 0).default(1000),
  ORKA_PR_REVIEW_MARKER_SECRET: z.string().optional(),
  ORKA_PR_REVIEW_MARKER_PREVIOUS_SECRETS: z.string().optional(),
  ORKA_PR_REVIEW_MARKER_TRUSTED_AUTHOR: z.string().optional(),
  ORKA_RUNTIME_COMMAND_CLAUDE: runtimeCommandText("ORKA_RUNTIME_COMMAND_CLAUDE").optional(),
  ORKA_RUNTIME_COMMAND_CODEX: runtimeCommandText("ORKA_RUNTIME_COMMAND_CODEX").optional(),
  ORKA_RUNTIME_COMMAND_COPILOT: runtimeCommandText("ORKA_RUNTIME_COMMAND_COPILOT").optional(),
  ORKA_RUNTIME_COMMAND_OPENCODE: runtimeCommandText("ORKA_RUNTIME_COMMAND_OPENCODE").optional(),
});

type Env = z.infer<typeof envSchema>;

function authConfig(env: Env): AuthConfig {
  const auth: AuthConfig = {
    isolation: { enforce: env.ORKA_ENFORCE_NAMESPACE_ISOLATION === "true", watchNamespace: env.ORKA_WATCH_NAMESPACE },
    signInLimit: { maxFailures: env.ORKA_AUTH_FAILURE_LIMIT, windowMs: parseDuration(env.ORKA_AUTH_FAILURE_WINDOW) },
    trustProxy: env.ORKA_TRUST_PROXY,
  };
  if (env.ORKA_TXN_TOKEN_ISSUER || env.ORKA_TXN_TOKEN_AUDIENCE) {
    if (!env.ORKA_TXN_TOKEN_ISSUER || !env.ORKA_TXN_TOKEN_AUDIENCE) {
      throw new OrkaError("invalid_argument", "transaction tokens need both ORKA_TXN_TOKEN_ISSUER and ORKA_TXN_TOKEN_AUDIENCE");
    }
    auth.transaction = {
      issuer: env.ORKA_TXN_TOKEN_ISSUER,
      audience: env.ORKA_TXN_TOKEN_AUDIENCE,
      jwksUrl: env.ORKA_TXN_TOKEN_JWKS_URL ?? `${env.ORKA_TXN_TOKEN_ISSUER.replace(/\/+$/, "")}/.well-known/jwks.json`,
      bearerAllowed: csv(env.ORKA_TXN_TOKEN_HEADERS).includes("Authorization:Bearer"),
      mode: env.ORKA_TXN_TOKEN_MODE,
      scopeOverrides: env.ORKA_TXN_TOKEN_SCOPES ? parseWith(scopeOverridesSchema, parseJson(env.ORKA_TXN_TOKEN_SCOPES, "ORKA_TXN_TOKEN_SCOPES")) : {},
    };
  } else if (env.ORKA_TXN_TOKEN_MODE !== "off") {
    throw new OrkaError("invalid_argument", "ORKA_TXN_TOKEN_MODE needs ORKA_TXN_TOKEN_ISSUER and ORKA_TXN_TOKEN_AUDIENCE");
  }
  if (env.ORKA_OIDC_ISSUER || env.ORKA_OIDC_AUDIENCE) {
    if (!env.ORKA_OIDC_ISSUER || !env.ORKA_OIDC_AUDIENCE) throw new OrkaError("invalid_argument", "OIDC needs both ORKA_OIDC_ISSUER and ORKA_OIDC_AUDIENCE");
    auth.oidc = {
      issuer: env.ORKA_OIDC_ISSUER,
      audience: env.ORKA_OIDC_AUDIENCE,
      jwksUrl: env.ORKA_OIDC_JWKS_URL,
      subjects: csv(env.ORKA_OIDC_SUBJECTS),
      namespace: env.ORKA_OIDC_NAMESPACE,
      role: env.ORKA_OIDC_ROLE,
    };
  }
  if (env.ORKA_TOKEN_REVIEW === "true") auth.tokenReview = { kubeconfig: env.ORKA_KUBECONFIG, audiences: csv(env.ORKA_TOKEN_REVIEW_AUDIENCES) };
  if (env.ORKA_CONTEXT_TOKEN_TTS_ENDPOINT) {
    const childScope = env.ORKA_CONTEXT_TOKEN_CHILD_SCOPE?.trim();
    if (!childScope) throw new OrkaError("invalid_argument", "ORKA_CONTEXT_TOKEN_CHILD_SCOPE is required when ORKA_CONTEXT_TOKEN_TTS_ENDPOINT is set");
    auth.childTokenExchange = {
      endpoint: env.ORKA_CONTEXT_TOKEN_TTS_ENDPOINT,
      audience: env.ORKA_CONTEXT_TOKEN_TTS_AUDIENCE,
      subjectTokenFile: env.ORKA_CONTEXT_TOKEN_SUBJECT_TOKEN_FILE,
      childScope,
    };
  }
  return auth;
}

const scopeOverridesSchema = z.record(z.string(), z.array(z.string().min(1)).min(1), {
  message: 'ORKA_TXN_TOKEN_SCOPES is a JSON object from a default scope to the scopes that replace it, e.g. {"orka:tasks:create":["tasks.write"]}',
});

function parseJson(text: string, name: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new OrkaError("invalid_argument", `${name} is not valid JSON`);
  }
}

export function serverConfigFrom(env: Record<string, string | undefined>, homeDir: string): ServerConfig {
  const cleaned = Object.fromEntries(Object.entries(env).filter(([k, v]) => k.startsWith("ORKA_") && v !== ""));
  const parsed = parseWith(envSchema, cleaned);
  const config = serverConfigOf(parsed, env, homeDir);
  refuseSessionPathsIntoOrkaState(config);
  return config;
}

/**
 * What a coding CLI may read besides the system (ORKA_RUNTIME_READ_PATHS, the files of a replacement
 * command) must not reach Orka's own state: the data directory (Secret key, database) or the work
 * directory (every attempt's checkout and transaction token).
 */
function refuseSessionPathsIntoOrkaState(config: ServerConfig): void {
  const guarded = [config.dataDir, config.workDir];
  const named = [
    ...config.runtimeReadPaths.map((path) => ({ path, variable: "ORKA_RUNTIME_READ_PATHS" })),
    ...Object.entries(config.runtimeCommands).flatMap(([runtime, command]) =>
      (command ?? []).filter((arg) => isAbsolute(arg)).map((path) => ({ path: resolve(path), variable: runtimeCommandVariable(runtime as RuntimeType) })),
    ),
  ];
  for (const { path, variable } of named) {
    const reached = guarded.find((dir) => isWithin(path, dir) || isWithin(dir, path));
    if (reached) throw new OrkaError("invalid_argument", `${variable} names ${path}, which would let a coding CLI read Orka's own state in ${reached}: name a path outside the data and work directories`);
  }
}

const isWithin = (parent: string, path: string) => path === parent || path.startsWith(parent.endsWith(sep) ? parent : parent + sep);

function serverConfigOf(parsed: z.infer<typeof envSchema>, env: Record<string, string | undefined>, homeDir: string): ServerConfig {
  return {
    host: parsed.ORKA_HOST,
    port: parsed.ORKA_PORT,
    dataDir: resolve(parsed.ORKA_DATA_DIR),
    workDir: resolve(parsed.ORKA_WORK_DIR ?? join(tmpdir(), `orka-work-${process.getuid?.() ?? "user"}`)),
    adminToken: parsed.ORKA_ADMIN_TOKEN,
    workerSlots: parsed.ORKA_WORKER_SLOTS,
    workerProcesses: parsed.ORKA_WORKER_PROCESSES,
    maxActivePerNamespace: parsed.ORKA_MAX_ACTIVE_TASKS_PER_NAMESPACE,
    modelCalls: { retryBaseMs: parsed.ORKA_MODEL_RETRY_BASE_MS, timeoutMs: parsed.ORKA_MODEL_TIMEOUT_MS },
    allowLoopbackEgress: parsed.ORKA_ALLOW_LOOPBACK_EGRESS === "true",
    scriptedDir: parsed.ORKA_SCRIPTED_DIR === undefined ? undefined : resolve(parsed.ORKA_SCRIPTED_DIR),
    mcpServersDir: parsed.ORKA_MCP_SERVERS_DIR === undefined ? undefined : resolve(parsed.ORKA_MCP_SERVERS_DIR),
    webFetchTimeoutMs: parsed.ORKA_WEB_FETCH_TIMEOUT_MS,
    search: { provider: parsed.ORKA_SEARCH_PROVIDER, url: parsed.ORKA_SEARCH_URL, secret: parsed.ORKA_SEARCH_SECRET },
    cliConfigPath: parsed.ORKA_CLI_CONFIG ?? resolve(homeDir, ".orka", "config.yaml"),
    logLevel: parsed.ORKA_LOG_LEVEL,
    auth: authConfig(parsed),
    audit: { maxAgeMs: parseDuration(parsed.ORKA_AUDIT_RETENTION), maxRows: parsed.ORKA_AUDIT_MAX_ROWS },
    github: githubSettings({
      apiBaseUrl: parsed.ORKA_GITHUB_API_BASE_URL,
      // The operator's read fallback keeps GitHub's conventional name.
      token: env.GITHUB_TOKEN,
      retryBaseMs: parsed.ORKA_GITHUB_RETRY_BASE_MS,
      markerSecret: parsed.ORKA_PR_REVIEW_MARKER_SECRET,
      previousMarkerSecrets: parsed.ORKA_PR_REVIEW_MARKER_PREVIOUS_SECRETS,
      trustedAuthor: parsed.ORKA_PR_REVIEW_MARKER_TRUSTED_AUTHOR,
    }),
    git: {
      ...DEFAULT_GIT_SETTINGS,
      allowedHosts: csv(parsed.ORKA_GIT_HOSTS).map((host) => host.toLowerCase()),
      configFile: parsed.ORKA_GIT_CONFIG === undefined ? undefined : resolve(parsed.ORKA_GIT_CONFIG),
    },
    githubTools: { autoMergePollIntervalMs: parseDuration(parsed.ORKA_GITHUB_AUTO_MERGE_POLL_INTERVAL) },
    runtimeCacheDir: resolve(parsed.ORKA_RUNTIME_CACHE ?? join(parsed.ORKA_DATA_DIR, "runtimes")),
    runtimeReadPaths: parsed.ORKA_RUNTIME_READ_PATHS,
    runtimeCommands: Object.fromEntries(RUNTIME_TYPES.flatMap((runtime) => {
      const command = parsed[runtimeCommandVariable(runtime)];
      return command ? [[runtime, command]] : [];
    })),
  };
}
