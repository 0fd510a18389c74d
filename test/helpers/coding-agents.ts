// Coding-agent Tasks in tests: the scripted stand-in CLI as the claude runtime's command, and the
// Provider a session's proxy forwards to, on the LLM peer.
import { fileURLToPath } from "node:url";

export const STAND_IN_CLI = fileURLToPath(new URL("../fixtures/fake-coding-cli.mjs", import.meta.url));

/** Server settings that make the claude runtime the stand-in CLI (it imports the MCP SDK from node_modules). */
export const STAND_IN_CLAUDE_ENV = {
  ORKA_RUNTIME_COMMAND_CLAUDE: JSON.stringify([process.execPath, STAND_IN_CLI]),
  ORKA_RUNTIME_READ_PATHS: fileURLToPath(new URL("../../node_modules", import.meta.url)),
};

/** YAML of a Secret holding `key` and a Provider of `type` named `name` on the LLM peer (`PEER_URL`, see startOrkaWithPeer). */
export function peerProviderYaml(name: string, type: "anthropic" | "openai", key: string): string {
  return `apiVersion: v1
kind: Secret
metadata: {name: ${name}-key}
stringData: {api-key: ${key}}
---
apiVersion: core.orka.ai/v1alpha1
kind: Provider
metadata: {name: ${name}}
spec: {type: ${type}, baseURL: "PEER_URL${type === "openai" ? "/v1" : ""}", secretRef: {name: ${name}-key}}
`;
}
