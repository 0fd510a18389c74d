/** Durable memory, review proposals and session transcripts. Every call is namespace-scoped. */

export interface Memory {
  id: string;
  namespace: string;
  sessionName?: string;
  agentName?: string;
  taskName?: string;
  parentTask?: string;
  source: string;
  sourceProposalId?: string;
  content: string;
  tags?: string[];
  disabled: boolean;
  deleted: boolean;
  createdAt: string;
  updatedAt: string;
  lastRecalledAt?: string;
  recalledCount: number;
}

export type ProposalStatus = "pending" | "accepted" | "rejected" | "applied" | "archived";

export interface MemoryProposal {
  id: string;
  namespace: string;
  taskName?: string;
  agentName?: string;
  type: string;
  skillName?: string;
  title: string;
  description?: string;
  content?: string;
  patch?: string;
  status: ProposalStatus;
  reviewer?: string;
  reviewNote?: string;
  appliedMemoryId?: string;
  appliedBy?: string;
  createdAt: string;
  updatedAt: string;
  reviewedAt?: string;
  appliedAt?: string;
}

export interface RecallFilter {
  query?: string;
  tags?: string[];
  taskName?: string;
  agentName?: string;
  source?: string;
  ids?: string[];
  includeDisabled?: boolean;
  includeDeleted?: boolean;
  limit: number;
}

export interface ProposalFilter {
  taskName?: string;
  agentName?: string;
  type?: string;
  status?: string;
  query?: string;
  limit: number;
}

export interface TranscriptMessage {
  id: number;
  sessionName: string;
  role: string;
  name?: string;
  content: string;
  createdAt: string;
}

export interface TranscriptSearch {
  query: string;
  sessionName?: string;
  excludeSessionName?: string;
  roles?: string[];
  limit: number;
  maxSnippetLength: number;
}

export interface TranscriptSearchResult {
  sessionName: string;
  messageId: number;
  role: string;
  name?: string;
  snippet: string;
  createdAt: string;
}

export type NewMemory = Pick<Memory, "content" | "source"> & Partial<Pick<Memory, "sessionName" | "agentName" | "taskName" | "parentTask" | "tags">>;
export type NewProposal = Pick<MemoryProposal, "title" | "type"> &
  Partial<Pick<MemoryProposal, "taskName" | "agentName" | "skillName" | "description" | "content" | "patch">>;

export interface MemoryStore {
  recall(namespace: string, filter: RecallFilter): Memory[];
  getMemory(namespace: string, id: string): Memory | undefined;
  createMemory(namespace: string, memory: NewMemory): Memory;
  updateMemory(namespace: string, id: string, change: Partial<Pick<Memory, "content" | "tags" | "agentName" | "taskName" | "source">> & { disabled?: boolean; deleted?: boolean }): Memory;
  setMemoryDisabled(namespace: string, id: string, disabled: boolean): void;
  markRecalled(namespace: string, ids: string[]): void;

  createProposal(namespace: string, proposal: NewProposal): MemoryProposal;
  getProposal(namespace: string, id: string): MemoryProposal | undefined;
  listProposals(namespace: string, filter: ProposalFilter): MemoryProposal[];
  reviewProposal(namespace: string, id: string, review: { status: string; reviewer: string; reviewNote?: string }): void;
  /** Applies an accepted `memory` proposal in one transaction; applying again returns the same memory. */
  applyProposal(namespace: string, id: string, appliedBy: string): Memory;
  archiveProposal(namespace: string, id: string): void;

  ensureSession(namespace: string, name: string): void;
  sessionExists(namespace: string, name: string): boolean;
  /** Takes the session for a Task; false while another Task holds it. */
  lockSession(namespace: string, name: string, task: string): boolean;
  unlockSession(namespace: string, name: string, task: string): void;
  appendTranscript(namespace: string, session: string, message: { role: string; name?: string; content: string; taskName?: string }): TranscriptMessage;
  transcript(namespace: string, session: string, limit: number): TranscriptMessage[];
  listSessions(namespace: string): { name: string; messages: number; lockedBy?: string; createdAt: string }[];
  searchTranscripts(namespace: string, search: TranscriptSearch): TranscriptSearchResult[];
}
