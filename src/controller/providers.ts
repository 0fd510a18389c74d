import type { ProviderSpec, ProviderStatus } from "../resources/provider.ts";
import type { ResourceStore } from "../store/resource-store.ts";
import { providerReadiness, secretReader } from "./resolve.ts";

/** A Provider's readiness (its type's needs, its key's Secret), kept in its status; its Secrets' changes wake it. */
export class ProviderReconciler {
  private readonly store: ResourceStore;

  constructor(store: ResourceStore) {
    this.store = store;
  }

  async reconcile(namespace: string, name: string): Promise<void> {
    const provider = await this.store.get<ProviderSpec, ProviderStatus>("Provider", namespace, name);
    if (!provider) return;
    const { ready, message } = await providerReadiness(secretReader(this.store), provider);
    if (provider.status?.ready === ready && provider.status?.message === message) return;
    await this.store.updateStatus({ ...provider, status: { ready, message, lastValidated: new Date().toISOString() } });
  }
}
