import type { AgentSpec } from "../../resources/agent.ts";
import { OFFLINE_PROVIDER_TYPES, type ProviderSpec } from "../../resources/provider.ts";
import type { ResourceStore } from "../../store/resource-store.ts";

/**
 * The models a compat client may name: `provider/defaultModel` for each Provider, the bare default,
 * and each Agent whose Provider is here and names a model (what `resolveCompatModel` accepts).
 */
export async function listModels(store: ResourceStore, namespace: string) {
  const [providers, agents] = await Promise.all([
    store.list<ProviderSpec, unknown>("Provider", { namespace }),
    store.list<AgentSpec, unknown>("Agent", { namespace }),
  ]);
  const created = Math.floor(Date.now() / 1000);
  const ids = new Map<string, string>();
  const providerNamed = new Map(providers.items.map((p) => [p.metadata.name, p.spec]));
  for (const p of providers.items) {
    if (!p.spec.defaultModel) continue;
    ids.set(`${p.metadata.name}/${p.spec.defaultModel}`, p.spec.type);
    if (p.metadata.name === "default") ids.set(p.spec.defaultModel, p.spec.type);
  }
  for (const agent of agents.items) {
    const ref = agent.spec.providerRef;
    const provider = ref && (ref.namespace ?? namespace) === namespace ? providerNamed.get(ref.name) : undefined;
    if (provider && (agent.spec.model?.name || provider.defaultModel || OFFLINE_PROVIDER_TYPES.includes(provider.type))) ids.set(agent.metadata.name, provider.type);
  }
  return [...ids].map(([id, owner]) => ({ id, object: "model", created, owned_by: owner }));
}
