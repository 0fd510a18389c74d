import { Workspace } from "./core/workspace.ts";
import type { ControlPlane, ToolContext, ToolSettings } from "./define.ts";

/** Where the control plane cannot be reached (the compat endpoints, benchmarks): tools that need it fail clearly. */
export const NO_CONTROL_PLANE: ControlPlane = {
  get: () => Promise.reject(new Error("this tool needs a Task; it is not available here")),
  post: () => Promise.reject(new Error("this tool needs a Task; it is not available here")),
  delete: () => Promise.reject(new Error("this tool needs a Task; it is not available here")),
  withIdempotencyKey: () => NO_CONTROL_PLANE,
};

/** The private directories of one attempt (or one compat request) that its tools work in. */
export interface ToolDirs {
  workspaceDir: string;
  tmpDir: string;
}

/** The one way to build a tool context: file tools see `/workspace` and `/tmp` of these directories. */
export function createToolContext(options: {
  namespace: string;
  taskName: string;
  dirs: ToolDirs;
  settings: ToolSettings;
  signal: AbortSignal;
  controlPlane?: ControlPlane;
  agentName?: string;
  sessionName?: string;
  park?: (message: string) => void;
}): ToolContext {
  const { dirs } = options;
  return {
    namespace: options.namespace,
    taskName: options.taskName,
    workspaceDir: dirs.workspaceDir,
    tmpDir: dirs.tmpDir,
    workspace: new Workspace([
      { virtual: "/workspace", host: dirs.workspaceDir },
      { virtual: "/tmp", host: dirs.tmpDir },
    ]),
    settings: options.settings,
    signal: options.signal,
    controlPlane: options.controlPlane ?? NO_CONTROL_PLANE,
    agentName: options.agentName,
    sessionName: options.sessionName,
    park: options.park ?? (() => undefined),
  };
}
