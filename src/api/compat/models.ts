import type { ProviderSpec } from "../../resources/provider.ts";
import type { ResourceStore } from "../../store/resource-store.ts";

/** The models a compat client may name: `provider/defaultModel` for each Provider, and the bare default. */
export async function listModels(store: ResourceStore, namespace: string) {
  const providers = await store.list<ProviderSpec, unknown>("Provider", { namespace });
  const created = Math.floor(Date.now() / 1000);
  const ids = new Map<string, string>();
  for (const p of providers.items) {
    if (!p.spec.defaultModel) continue;
    ids.set(`${p.metadata.name}/${p.spec.defaultModel}`, p.spec.type);
    if (p.metadata.name === "default") ids.set(p.spec.defaultModel, p.spec.type);
  }
  return [...ids].map(([id, owner]) => ({ id, object: "model", created, owned_by: owner }));
}
