import type { AgentSpec } from "../resources/agent.ts";
import type { Resource } from "../resources/meta.ts";
import { OFFLINE_PROVIDER_TYPES, type ProviderSpec, type ProviderStatus } from "../resources/provider.ts";
import type { SecretSpec } from "../resources/secret.ts";
import type { ModelEndpoint } from "../providers/index.ts";
import { loadScriptFile } from "../providers/scripted.ts";
import type { ResourceStore } from "../store/resource-store.ts";
import { parseDuration } from "../util/duration.ts";

export type Provider = Resource<ProviderSpec, ProviderStatus>;
export type Agent = Resource<AgentSpec, unknown>;

/** Reads a Secret by namespace and name. */
export type SecretReader = (namespace: string, name: string) => Promise<Resource<SecretSpec, unknown> | undefined>;

/**
 * Reads each Secret once for one piece of work (an admission checks a Provider's Secret and then takes its
 * key from it). The decrypted values are dropped with the reader, when that work is done: Secrets are
 * never cached beyond the call that needs them.
 */
export function secretReader(store: ResourceStore): SecretReader {
  const read = new Map<string, Promise<Resource<SecretSpec, unknown> | undefined>>();
  return (namespace, name) => {
    const key = `${namespace}/${name}`;
    let secret = read.get(key);
    if (!secret) read.set(key, (secret = store.get<SecretSpec, unknown>("Secret", namespace, name)));
    return secret;
  };
}

/** Whether a Provider can serve (Azure fields set, its Secret and key present), with the message its status and failing Tasks show. */
export async function providerReadiness(secrets: SecretReader, provider: Provider): Promise<{ ready: boolean; message: string }> {
  const { spec } = provider;
  if (spec.type === "azure-openai") {
    if (!spec.azure?.deploymentName) return { ready: false, message: "azure.deploymentName is required for azure-openai provider" };
    if (!spec.baseURL) return { ready: false, message: "baseURL is required for azure-openai provider" };
  }
  if (spec.secretRef) {
    const secret = await secrets(provider.metadata.namespace, spec.secretRef.name);
    if (!secret) return { ready: false, message: `referenced secret not found: ${spec.secretRef.name}` };
    if (!(spec.secretRef.key in secret.spec.data)) return { ready: false, message: `key '${spec.secretRef.key}' not found in secret` };
  }
  return { ready: true, message: "provider is ready" };
}

/** What the operator configured for Providers. */
export interface ProviderSettings {
  /** The only directory `scripted.file` may name a file in (ORKA_SCRIPTED_DIR). */
  scriptedDir?: string;
}

/**
 * A model endpoint the worker can call, with its key from the Provider's Secret or, when that holds none,
 * from the first fallback Secret with a `<type>-api-key` or `api-key` entry,
 * and a scripted Provider's turns (read here from its file, if it names one; an unreadable one is an OrkaError).
 */
export async function resolveEndpoint(
  secrets: SecretReader,
  provider: Provider,
  model: string | undefined,
  fallbackSecrets: string[],
  settings: ProviderSettings,
): Promise<ModelEndpoint> {
  const { spec, metadata } = provider;
  const endpoint: ModelEndpoint = {
    name: metadata.name,
    type: spec.type,
    model: model || spec.defaultModel || (OFFLINE_PROVIDER_TYPES.includes(spec.type) ? spec.type : ""),
    baseURL: spec.baseURL,
    azure: spec.type === "azure-openai" ? { deployment: spec.azure?.deploymentName, apiVersion: spec.azure?.apiVersion } : undefined,
    script: spec.scripted && { turns: spec.scripted.turns ?? (await loadScriptFile(spec.scripted.file!, settings.scriptedDir)) },
    replay: spec.replay,
    timeoutMs: spec.timeout === undefined ? undefined : parseDuration(spec.timeout),
  };
  if (OFFLINE_PROVIDER_TYPES.includes(spec.type)) return endpoint;
  endpoint.apiKey = await findApiKey(secrets, metadata.namespace, spec, fallbackSecrets);
  return endpoint;
}

/** An Agent's `model.timeout` wins over each Provider's, for its fallbacks too. */
export function applyAgentTimeout(agent: Agent | undefined, endpoints: ModelEndpoint[]): void {
  const timeout = agent?.spec.model?.timeout;
  if (timeout === undefined) return;
  for (const endpoint of endpoints) endpoint.timeoutMs = parseDuration(timeout);
}

async function findApiKey(secrets: SecretReader, namespace: string, spec: ProviderSpec, fallbackSecrets: string[]): Promise<string | undefined> {
  if (spec.secretRef) {
    const secret = await secrets(namespace, spec.secretRef.name);
    const value = secret?.spec.data[spec.secretRef.key];
    if (value) return value;
  }
  for (const name of fallbackSecrets) {
    const secret = await secrets(namespace, name);
    const value = secret?.spec.data[`${spec.type}-api-key`] ?? secret?.spec.data["api-key"];
    if (value) return value;
  }
  return undefined;
}
