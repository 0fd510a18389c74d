/** Plans of autonomous Tasks and messages between sibling Tasks. */

export interface Plan {
  namespace: string;
  task: string;
  iteration: number;
  summary: string;
  progressPct: number;
  goalComplete: boolean;
  planDocument: string;
  createdAt: string;
  updatedAt: string;
}

export interface Message {
  id: number;
  namespace: string;
  fromTask: string;
  toTask: string;
  parentTask: string;
  content: string;
  read: boolean;
  createdAt: string;
}

export interface CoordinationStore {
  putPlan(plan: Omit<Plan, "createdAt" | "updatedAt">): Plan;
  getPlan(namespace: string, task: string): Plan | undefined;
  deletePlan(namespace: string, task: string): void;
  sendMessage(message: Pick<Message, "namespace" | "fromTask" | "toTask" | "parentTask" | "content">): Message;
  /** Unread messages for `reader` in its family, oldest first; marks them read for this reader only. */
  readMessages(namespace: string, parentTask: string, reader: string, markRead: boolean): Message[];
  /** Messages a Task sent or received, and for a coordinator its family's. */
  deleteMessagesOf(namespace: string, task: string): void;
}
