import { isTerminal } from "../resources/task.ts";

/** What the CLI reads of a Task to tell whether it is parked for a person. */
export interface TaskState {
  metadata: { name: string; namespace: string };
  status?: { phase?: string; message?: string; conditions?: { type: string; status: string; message?: string }[] };
}

/** The approval a parked Task waits for: the controller names it in the WaitingForApproval condition. */
export function awaitedApproval(task: TaskState): string | undefined {
  if (isTerminal(task)) return undefined;
  const condition = task.status?.conditions?.find((c) => c.type === "WaitingForApproval");
  return condition?.status === "True" ? condition.message : undefined;
}

/** How to go on with a parked Task, as commands to copy (the namespace spelled out, so they work from any config). */
export function parkedNotice(task: TaskState, approval: string): string {
  const command = (verb: string) => `orka -n ${task.metadata.namespace} task ${verb} ${task.metadata.name} ${approval}`;
  return `task/${task.metadata.name} is waiting for approval ${approval}\n  approve it with: ${command("approve")}\n  or decline it:   ${command("decline")}`;
}
