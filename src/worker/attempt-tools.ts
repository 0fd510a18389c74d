import { carriedSecretValues, type AttemptConfig } from "../runner/attempt-config.ts";
import { makeAttemptDirs } from "../runner/attempt-dirs.ts";
import { createToolContext } from "../tools/context.ts";
import type { ControlPlaneClient } from "./client.ts";
import { toolExecutor } from "./tool-executor.ts";

/**
 * The tool executor of a Task's attempt — the same for the AI loop and a coding-agent session's broker:
 * built-in tools run here with the attempt's context, custom Tools on the server, which rechecks them.
 */
export function attemptToolExecutor(
  config: AttemptConfig,
  client: ControlPlaneClient,
  signal: AbortSignal,
  tools: { allowed: string[]; custom: Iterable<string>; park?: (message: string) => void },
) {
  return toolExecutor({
    allowed: tools.allowed,
    secretValues: carriedSecretValues(config),
    customTools: new Set(tools.custom),
    callCustomTool: async (name, args, key, journal) => {
      const response = await client.callTool(name, args, key, journal);
      if (response.parked) tools.park?.(response.result);
      return response.result;
    },
    context: createToolContext({
      namespace: config.task.namespace,
      taskName: config.task.name,
      dirs: config,
      settings: config.toolSettings,
      signal,
      controlPlane: client,
      agentName: config.agentName,
      sessionName: config.session?.name,
      park: tools.park,
    }),
    prepareDirs: () => makeAttemptDirs(config),
  });
}
