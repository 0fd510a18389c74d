/** Built-in tool names by family, as the seed lists them (the normative built-in tools page). */

export const CORE_TOOLS = ["web_search", "code_exec", "file_read", "web_fetch", "file_write", "request_approval"] as const;

export const MEMORY_TOOLS = ["recall_memory", "remember", "propose_memory", "search_transcript"] as const;

/** What `coordination.enabled` adds: coordination, pull request, agent management tools and update_plan. */
export const COORDINATOR_TOOLS = [
  "delegate_task",
  "wait_for_tasks",
  "create_container_task",
  "cancel_task",
  "send_message",
  "check_messages",
  "create_pull_request",
  "list_pull_requests",
  "check_pr_review_marker",
  "check_pull_request_ci",
  "merge_pull_request",
  "auto_merge_pull_request",
  "review_pull_request",
  "post_review_comment",
  "create_agent",
  "delete_agent",
  "update_plan",
] as const;

export const CHILD_MESSAGING_TOOLS = ["send_message", "check_messages"] as const;

/** Opt-in only: never added automatically. */
export const ISSUE_TOOLS = ["list_issues", "get_issue", "comment_on_issue"] as const;

export const GATEWAY_TOOLS = ["reply_in_conversation"] as const;

/** Every name a built-in owns; a custom Tool may not take one (built-ins would shadow it). */
export const BUILTIN_TOOL_NAMES: ReadonlySet<string> = new Set<string>([
  ...CORE_TOOLS,
  ...MEMORY_TOOLS,
  ...COORDINATOR_TOOLS,
  ...ISSUE_TOOLS,
  ...GATEWAY_TOOLS,
  "create_pr_monitor",
  "list_connections",
  "run_validation",
]);
