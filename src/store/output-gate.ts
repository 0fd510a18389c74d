/**
 * Holds back what leaves the server's process until the writes made before it are committed. The store
 * may gather several transactions into one commit; until that commit, a write is visible inside the
 * process only, and a crash would undo it. So a reply, an event on a stream, a message to a worker or a
 * call to another service, which may tell of such a write or act on it, goes out through the gate.
 */
export interface OutputGate {
  /** Runs `send` at once when no write waits for its commit, else right after that commit; in call order either way. */
  release(send: () => void): void;
  /** Resolves once every write made so far is committed. */
  settled(): Promise<void>;
}

/** The gate of a store that commits every transaction as it ends: nothing is ever held. */
export const openGate: OutputGate = {
  release: (send) => send(),
  settled: () => Promise.resolve(),
};
