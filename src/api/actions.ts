/**
 * Every public route's action name and the default scope a transaction token needs for it.
 * The server refuses to start with a public route that is missing here, so no route goes unchecked.
 */
export interface RouteAction {
  action: string;
  /** Undefined only for routes that act on nothing (who am I). */
  scope?: string;
}

const entries: [string, string, string | undefined][] = [
  ["GET /api/v1/auth/validate", "validateToken", undefined],
  ["GET /api/v1/auth/whoami", "whoAmI", undefined],
  ["POST /api/v1/auth/tokens", "createApiToken", "orka:security:write"],
  ["GET /api/v1/auth/tokens", "listApiTokens", "orka:security:read"],
  ["DELETE /api/v1/auth/tokens/:name", "revokeApiToken", "orka:security:write"],
  ["GET /api/v1/audit", "readAuditLog", "orka:security:read"],
  ["GET /api/v1/streams", "countStreams", "orka:security:read"],

  ["POST /api/v1/tasks", "createTask", "orka:tasks:create"],
  ["POST /api/v1/tasks/:name/fork", "createTask", "orka:tasks:create"],
  ["GET /api/v1/tasks", "listTasks", "orka:tasks:list"],
  ["GET /api/v1/watch/tasks", "listTasks", "orka:tasks:list"],
  ["GET /api/v1/task-summary", "listTasks", "orka:tasks:list"],
  ["GET /api/v1/tasks/:name", "getTask", "orka:tasks:get"],
  ["PUT /api/v1/tasks/:name", "updateTask", "orka:tasks:update"],
  ["DELETE /api/v1/tasks/:name", "deleteTask", "orka:tasks:delete"],
  ["POST /api/v1/tasks/:name/cancel", "cancelTask", "orka:tasks:update"],
  ["POST /api/v1/tasks/:name/approvals/:id/decision", "decideApproval", "orka:tasks:update"],
  ["GET /api/v1/approvals", "listApprovals", "orka:tasks:get"],
  ...["approvals", "artifacts", "artifacts/:file", "children", "events", "export", "logs", "plan", "result", "stream"].map(
    (sub): [string, string, string] => [`GET /api/v1/tasks/:name/${sub}`, "getTask", "orka:tasks:get"],
  ),

  ...crud("agents", "Agent", "orka:agents:read", "orka:agents:write"),
  ...crud("skills", "Skill", "orka:skills:read", "orka:skills:write"),
  ...crud("providers", "Provider", "orka:providers:use", "orka:security:write"),
  ...crud("tools", "Tool", "orka:tools:read", "orka:security:write"),
  ...crud("secrets", "Secret", "orka:security:read", "orka:security:write"),

  ["GET /api/v1/memories", "listMemories", "orka:memory:read"],
  ["GET /api/v1/memories/:id", "getMemory", "orka:memory:read"],
  ["POST /api/v1/memories", "createMemory", "orka:memory:write"],
  ["PUT /api/v1/memories/:id", "updateMemory", "orka:memory:write"],
  ["DELETE /api/v1/memories/:id", "deleteMemory", "orka:memory:write"],
  ["POST /api/v1/memories/:id/disable", "updateMemory", "orka:memory:write"],
  ["POST /api/v1/memories/:id/enable", "updateMemory", "orka:memory:write"],
  ["GET /api/v1/memory-proposals", "listMemoryProposals", "orka:memory:read"],
  ["GET /api/v1/memory-proposals/:id", "getMemoryProposal", "orka:memory:read"],
  ["POST /api/v1/memory-proposals", "createMemoryProposal", "orka:memory:write"],
  ["POST /api/v1/memory-proposals/:id/review", "reviewMemoryProposal", "orka:memory:review"],
  ["POST /api/v1/memory-proposals/:id/apply", "applyMemoryProposal", "orka:memory:review"],
  ["POST /api/v1/memory-proposals/:id/archive", "archiveMemoryProposal", "orka:memory:review"],
  ["GET /api/v1/sessions", "listSessions", "orka:sessions:read"],
  ["GET /api/v1/sessions/:name", "getSession", "orka:sessions:read"],

  ["GET /openai/v1/models", "listModels", "orka:providers:use"],
  ["POST /openai/v1/chat/completions", "createChatCompletion", "orka:providers:use"],
  ["GET /anthropic/v1/models", "listModels", "orka:providers:use"],
  ["POST /anthropic/v1/messages", "createMessage", "orka:providers:use"],
];

function crud(path: string, kind: string, readScope: string, writeScope: string): [string, string, string][] {
  return [
    [`GET /api/v1/${path}`, `list${kind}s`, readScope],
    [`GET /api/v1/${path}/:name`, `get${kind}`, readScope],
    [`POST /api/v1/${path}`, `create${kind}`, writeScope],
    [`PUT /api/v1/${path}/:name`, `update${kind}`, writeScope],
    [`DELETE /api/v1/${path}/:name`, `delete${kind}`, writeScope],
  ];
}

const ROUTE_ACTIONS: ReadonlyMap<string, RouteAction> = new Map(entries.map(([route, action, scope]) => [route, { action, scope }]));

export function routeAction(method: string, url: string): RouteAction | undefined {
  return ROUTE_ACTIONS.get(`${method} ${url}`);
}
