import type { GrantGate } from "../auth/grant-gate.ts";
import type { EgressPolicy } from "../policy/ssrf.ts";
import type { TaskSecrets } from "../policy/redact.ts";
import type { ModelCallSettings } from "../providers/model.ts";
import type { WorkloadRunner } from "../runner/runner.ts";
import type { ApprovalStore } from "../store/approval-store.ts";
import type { CoordinationStore } from "../store/coordination-store.ts";
import type { TaskDataStore } from "../store/data-store.ts";
import type { JournalStore } from "../store/journal-store.ts";
import type { MemoryStore } from "../store/memory-store.ts";
import type { OutputGate } from "../store/output-gate.ts";
import type { ResourceStore } from "../store/resource-store.ts";
import type { ToolSettings } from "../tools/define.ts";
import type { StdioServerLauncher } from "../tools/custom/mcp-stdio.ts";
import type { Logger } from "../util/logger.ts";
import type { GitSettings } from "../workspace/git.ts";
import type { GithubSettings } from "../github/settings.ts";
import type { ProviderSettings } from "./resolve.ts";
import type { RuntimeCommands } from "../config.ts";

/** What the server gives the controller: its stores, its runner and the settings its reconcilers read. */
export interface ControllerOptions {
  store: ResourceStore;
  data: TaskDataStore;
  memory: MemoryStore;
  coordination: CoordinationStore;
  approvals: ApprovalStore;
  /** Attempt journals: a lost attempt of an ai Task resumes from its journal. */
  journal: JournalStore;
  /** Holds the calls the controller makes to other services until the writes before them are committed. */
  gate: OutputGate;
  runner: WorkloadRunner;
  logger: Logger;
  /** Where workers reach /internal/v1. */
  controllerURL: string;
  /** Attempts that may run at once (worker slots). */
  slots: number;
  /** Running Tasks allowed per namespace; 0 = no limit. */
  maxActivePerNamespace: number;
  modelCalls: ModelCallSettings;
  /** Where webhooks, HTTP Tool calls and Tool probes may go. */
  egress: EgressPolicy;
  /** Starts stdio MCP Tools' servers in the sandbox, for their probes; absent, such Tools are unavailable. */
  mcpStdio?: StdioServerLauncher;
  /** What the built-in tools get; the search key is added per Task from `searchSecret`. */
  toolSettings: ToolSettings;
  /** A Secret (key `api-key`) in each Task's namespace holding the search API key. */
  searchSecret?: string;
  /** Transaction grants, checked again when an attempt starts. */
  grants: GrantGate;
  /** Learns, per attempt, the Secret values that must never show in what the Task stores. */
  secrets: TaskSecrets;
  /** Where scripted Providers may read files. */
  providers: ProviderSettings;
  /** How workspace repositories are reached: allowed hosts, the operator's git config. */
  git: GitSettings;
  /** Where GitHub's API is, for the pull requests the workspace publisher opens. */
  github: GithubSettings;
  /** The operator's replacement commands of coding CLIs, carried in a coding-agent attempt's run. */
  runtimeCommands: RuntimeCommands;
  /** Where a coding-agent attempt's worker installs the pinned CLI it needs. */
  runtimeCacheDir: string;
  /** Host paths every coding CLI may read (`ORKA_RUNTIME_READ_PATHS`), carried in a coding-agent attempt's run. */
  runtimeReadPaths: string[];
}

/** Puts a work-queue key (`Kind/namespace/name`) up for reconciling, now or after a delay. */
export type Wake = (key: string, delayMs?: number) => void;
