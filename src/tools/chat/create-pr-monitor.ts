import { defineTool } from "../define.ts";
import { prMonitorArgs } from "./pr-monitor-args.ts";

/**
 * create_pr_monitor: a scheduled AI Task that reviews one repository's pull requests. Offered only when a
 * Task or Agent selects it by name (and by the chat orchestrator). The control plane checks and creates.
 */
export const createPrMonitor = defineTool({
  name: "create_pr_monitor",
  family: "chat",
  description:
    "Create a scheduled AI Task that reviews the open pull requests of one GitHub repository on a cron schedule, posting one review per pull request head. " +
    "It keeps no state besides the review markers on GitHub; for durable runs, review records and audit use a RepositoryMonitor.",
  parameters: prMonitorArgs,
  aliases: { readCredentialRef: "gitSecretRef", repoUrl: "repo_url", agentRef: "agent_ref", providerRef: "provider_ref", perPage: "per_page", reviewEvent: "review_event" },
  answersWithEnvelope: true,
  async run(args, ctx) {
    return ctx.controlPlane.post(`tasks/${ctx.namespace}/${ctx.taskName}/pr-monitors`, args);
  },
});

export const CHAT_TOOL_DECLARATIONS = [createPrMonitor];
