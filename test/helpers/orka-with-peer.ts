import { startLlmPeer, type LlmPeer } from "../peers/llm-server.ts";
import { startOrkaServer, type OrkaUnderTest } from "./orka-server.ts";

/**
 * A real server and the LLM peer, with a Secret `key` and an OpenAI-format Provider `peer` pointing
 * at it, plus whatever YAML the test adds (`PEER_URL` in it is replaced by the peer's address).
 */
export async function startOrkaWithPeer(yaml = "", env: Record<string, string> = {}): Promise<{ orka: OrkaUnderTest; peer: LlmPeer; stop(): Promise<void> }> {
  const peer = await startLlmPeer();
  const orka = await startOrkaServer(env);
  const applied = await orka.cli(["apply", "-f", "-"], `
apiVersion: v1
kind: Secret
metadata: {name: key}
stringData: {api-key: sk-peer-0000000000000000000}
---
apiVersion: core.orka.ai/v1alpha1
kind: Provider
metadata: {name: peer}
spec: {type: openai, baseURL: "${peer.url}/v1", secretRef: {name: key}}
${yaml ? `---\n${yaml.replaceAll("PEER_URL", peer.url)}` : ""}`);
  if (applied.code !== 0) throw new Error(`apply failed: ${applied.stderr}`);
  return {
    orka,
    peer,
    async stop() {
      await orka.stop();
      await peer.close();
    },
  };
}

/** A Tool's status once its first availability probe has answered (at most `timeoutMs`). */
export async function probedTool(orka: OrkaUnderTest, name: string, timeoutMs = 15_000): Promise<any> {
  for (const deadline = Date.now() + timeoutMs; ; await new Promise((resolve) => setTimeout(resolve, 100))) {
    const status = (await orka.api("GET", `/api/v1/tools/${name}?namespace=default`)).body.status ?? {};
    if (status.available !== undefined) return status;
    if (Date.now() > deadline) throw new Error(`Tool ${name} was not probed within ${timeoutMs} ms`);
  }
}
