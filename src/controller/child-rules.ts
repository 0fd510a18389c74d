import { coordinationOf } from "../resources/agent.ts";
import { ANNOTATION, LABEL } from "../resources/meta.ts";
import type { Agent } from "./resolve.ts";

/** A child of a coordinator as the rule sees it, whether it is about to be created or about to start. */
export interface ChildRequest {
  parentName: string | undefined;
  /** The parent Task's Agent, which holds the coordination settings. */
  parentAgent: Agent | undefined;
  /** How deep the child is: 1 for a child of a top-level Task. */
  depth: number;
  /** The child Task's namespace. */
  namespace: string;
  agentRef: { name: string; namespace: string };
  /** The child's Agent, if it exists. */
  agent: Agent | undefined;
}

export type ChildRefusal = { rule: "coordination" } | { rule: "depth"; maxDepth: number } | { rule: "agent" };

/**
 * Whether a coordinator may have this child: the one rule delegate_task checks before it creates a
 * child and admission checks again before the child starts (the parent's Agent may have changed in
 * between). The parent's Agent must coordinate; the child may be at most `maxDepth` deep; its Agent
 * must be on `allowedAgents` (an entry without a namespace stands for the child's), or, when there is
 * no such list, be one the parent made with create_agent. Undefined: the child is allowed.
 */
export function childRefusal(child: ChildRequest): ChildRefusal | undefined {
  if (!child.parentAgent?.spec.coordination?.enabled) return { rule: "coordination" };
  const { maxDepth, allowedAgents = [] } = coordinationOf(child.parentAgent.spec);
  if (child.depth > maxDepth) return { rule: "depth", maxDepth };
  const { agentRef, agent } = child;
  const permitted =
    allowedAgents.length > 0
      ? allowedAgents.some((allowed) => allowed.name === agentRef.name && (allowed.namespace ?? child.namespace) === agentRef.namespace)
      : agent?.metadata.labels?.[LABEL.createdBy] === "create_agent" && agent.metadata.annotations?.[ANNOTATION.parentTaskName] === child.parentName;
  return permitted ? undefined : { rule: "agent" };
}
