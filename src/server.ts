import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { FastifyInstance } from "fastify";
import { buildApi, type ApiRoute } from "./api/server.ts";
import { TokenAuthenticator } from "./auth/static-tokens.ts";
import { claimCliConfig } from "./cli/config.ts";
import { ApiAuthenticator } from "./auth/authenticator.ts";
import { GrantGate } from "./auth/grant-gate.ts";
import { OidcAuthenticator } from "./auth/oidc.ts";
import type { ServerConfig } from "./config.ts";
import { Controller } from "./controller/controller.ts";
import { LocalWorkerPool } from "./runner/local/pool.ts";
import { sandboxedStdioLauncher } from "./sandbox/stdio-server.ts";
import { CompatAttempts } from "./api/compat/attempts.ts";
import { lockDataDir, type DataDirLock } from "./store/data-dir-lock.ts";
import { SecretCipher } from "./store/secret-cipher.ts";
import { startBackgroundCheckpoints } from "./store/sqlite/checkpointer.ts";
import { openDatabase, StoreWritability } from "./store/sqlite/db.ts";
import { GroupCommit } from "./store/sqlite/group-commit.ts";
import { RedactingTaskDataStore } from "./store/sqlite/redacting-data-store.ts";
import { TaskSecrets } from "./policy/redact.ts";
import { SqliteResourceStore } from "./store/sqlite/resource-store.ts";
import { SqliteMemoryStore } from "./store/sqlite/memory-store.ts";
import { SqliteCoordinationStore } from "./store/sqlite/coordination-store.ts";
import { SqliteApprovalStore } from "./store/sqlite/approval-store.ts";
import { SqliteAuditStore } from "./store/sqlite/audit-store.ts";
import { SqliteJournalStore } from "./store/sqlite/journal-store.ts";
import { createLogger } from "./util/logger.ts";
import { errorMessage } from "./util/errors.ts";
import type { ResourceStore } from "./store/resource-store.ts";
import type { TaskDataStore } from "./store/data-store.ts";
import type { CoordinationStore } from "./store/coordination-store.ts";

const API_CLOSE_GRACE_MS = 2_000;

export interface RunningOrka {
  url: string;
  /** The stores, for embedding Orka in another program (and for tests). */
  store: ResourceStore;
  data: TaskDataStore;
  coordination: CoordinationStore;
  /** Every HTTP route the server serves (tests walk it to prove each one is authorized). */
  routes: ApiRoute[];
  /** Lines for the console: whether the CLI config on this machine points at this server. */
  notices: string[];
  close(): Promise<void>;
}

/** `orka serve`: API, controller and local worker pool in one process, all state in SQLite. */
export async function startOrka(config: ServerConfig): Promise<RunningOrka> {
  mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
  const dataDirLock = lockDataDir(config.dataDir);
  return startOnLockedDataDir(config, dataDirLock).catch((err: unknown) => {
    dataDirLock.release();
    throw err;
  });
}

async function startOnLockedDataDir(config: ServerConfig, dataDirLock: DataDirLock): Promise<RunningOrka> {
  const logger = createLogger(config.logLevel);
  const db = openDatabase(join(config.dataDir, "orka.db"), (fromVersion, toVersion) =>
    logger.info({ fromVersion, toVersion }, "upgrading the store's schema; on a large store this takes a while, and the server answers once it is done"),
  );
  const commits = new GroupCommit(db, {
    commitFailed: (err) => {
      // The writes of the turn are undone while what made them went on: only a fresh start is right again.
      logger.fatal({ err: errorMessage(err) }, "the store could not commit; the server stops, and starts again from what was committed (nothing that told of the lost writes went out)");
      process.exit(1);
    },
    sendFailed: (err) => logger.error({ err: errorMessage(err) }, "sending what waited for a commit failed"),
  });
  const checkpoints = startBackgroundCheckpoints(db, (problem) => logger.warn(problem));
  const store = new SqliteResourceStore(db, SecretCipher.fromKeyFile(join(config.dataDir, "secret.key")));
  const secrets = new TaskSecrets();
  const data = new RedactingTaskDataStore(db, secrets);
  const memory = new SqliteMemoryStore(db);
  const coordination = new SqliteCoordinationStore(db);
  const approvals = new SqliteApprovalStore(db);
  const audit = new SqliteAuditStore(db, config.audit);
  const journal = new SqliteJournalStore(db);
  const { token: adminToken, file: adminTokenFile } = adminTokenFor(config);
  const tokens = new TokenAuthenticator(db, adminToken);
  const authenticator = new ApiAuthenticator({
    tokens,
    transaction: config.auth.transaction,
    oidc: config.auth.oidc && new OidcAuthenticator(config.auth.oidc),
    // The Kubernetes client is large; it is loaded only when TokenReview is configured.
    tokenReview: config.auth.tokenReview && new (await import("./auth/token-review.ts")).TokenReviewAuthenticator(config.auth.tokenReview),
  });
  const grants = new GrantGate(config.auth.transaction, audit, logger);
  const runner = new LocalWorkerPool({ size: config.workerProcesses, attemptsDir: config.workDir, git: config.git, gate: commits });

  const egress = { allowLoopback: config.allowLoopbackEgress };
  // Stdio MCP Tools' servers are started here, for the controller's probes and the API's calls, in the sandbox.
  const mcpStdio = sandboxedStdioLauncher({ serversDir: config.mcpServersDir });
  const providers = { scriptedDir: config.scriptedDir };
  const toolSettings = {
    fetch: { egress, timeoutMs: config.webFetchTimeoutMs },
    search: { provider: config.search.provider, url: config.search.url, timeoutMs: 30_000 },
    github: config.githubTools,
  };
  let ready = false;
  const writability = new StoreWritability(db);
  let controllerURL = "";
  const controller = new Controller({
    store,
    data,
    memory,
    coordination,
    approvals,
    journal,
    gate: commits,
    runner,
    logger,
    get controllerURL() {
      return controllerURL;
    },
    slots: config.workerSlots,
    maxActivePerNamespace: config.maxActivePerNamespace,
    modelCalls: config.modelCalls,
    egress,
    mcpStdio,
    toolSettings,
    searchSecret: config.search.secret,
    grants,
    secrets,
    providers,
    git: config.git,
    github: config.github,
    runtimeCommands: config.runtimeCommands,
    runtimeCacheDir: config.runtimeCacheDir,
    runtimeReadPaths: config.runtimeReadPaths,
  });
  const routes: ApiRoute[] = [];
  const app = buildApi(
    {
      store,
      data,
      memory,
      coordination,
      approvals,
      audit,
      journal,
      gate: commits,
      controller,
      tokens,
      authenticator,
      grants,
      isolation: config.auth.isolation,
      signInLimit: config.auth.signInLimit,
      trustProxy: config.auth.trustProxy,
      childTokenExchange: config.auth.childTokenExchange,
      readiness: () => (ready ? writability.problem() : "controller is starting"),
      noteFailure: (err) => writability.noteFailure(err),
      egress,
      mcpStdio,
      secrets,
      providers,
      git: config.git,
      runner,
      compat: new CompatAttempts({ runner, controllerURL: () => controllerURL, toolSettings, modelCalls: config.modelCalls, maxRunning: config.workerSlots }),
      github: config.github,
    },
    logger,
    routes,
  );
  // Local workers reach the worker API over their IPC channel: the same routes and checks as over HTTP, without a socket.
  runner.serveControlPlane(app.workerCalls);
  await app.listen({ host: config.host, port: config.port });
  const address = app.server.address();
  const port = typeof address === "object" && address ? address.port : config.port;
  const url = `http://${config.host.includes(":") ? `[${config.host}]` : config.host}:${port}`;
  controllerURL = url;
  // A token from ORKA_ADMIN_TOKEN is the operator's to hand out; only one kept in the data dir is written for the CLI.
  const notices = adminTokenFile && config.cliConfigPath ? [claimCliConfig(config.cliConfigPath, url, adminToken, adminTokenFile)] : [];
  await controller.start();
  ready = true;

  return {
    url,
    store,
    data,
    coordination,
    routes,
    notices,
    /**
     * A graceful stop: start nothing new, then end the workers (their attempts are lost, and resume
     * on the next start like after a crash), then the API. Queued Tasks stay Pending. The API goes
     * last: a closing API refuses workers' reports, which would fail their attempts.
     */
    async close() {
      ready = false;
      await controller.stop();
      await runner.close();
      await closeApi(app);
      await checkpoints.stop();
      commits.commit();
      db.close();
      dataDirLock.release();
    },
  };
}

/** Lets requests in flight finish; connections still open after a grace (event streams follow Tasks that no longer change) are cut. */
async function closeApi(app: FastifyInstance): Promise<void> {
  const cutOpenStreams = setTimeout(() => app.server.closeAllConnections(), API_CLOSE_GRACE_MS);
  try {
    await app.close();
  } finally {
    clearTimeout(cutOpenStreams);
  }
}

/** ORKA_ADMIN_TOKEN, else the token generated on first start and kept in the data dir (`file`). */
function adminTokenFor(config: ServerConfig): { token: string; file?: string } {
  if (config.adminToken) return { token: config.adminToken };
  const file = join(config.dataDir, "admin-token");
  if (existsSync(file)) return { token: readFileSync(file, "utf8").trim(), file };
  const token = `orka_admin_${randomBytes(24).toString("base64url")}`;
  writeFileSync(file, `${token}\n`, { mode: 0o600 });
  return { token, file };
}
