import { AuthenticationV1Api, KubeConfig } from "@kubernetes/client-node";
import { DEFAULT_NAMESPACE } from "../resources/meta.ts";
import { OrkaError } from "../util/errors.ts";
import { sha256Hex } from "../util/hash.ts";
import type { Principal } from "./principal.ts";

export interface TokenReviewConfig {
  /** A kubeconfig file; unset means the in-cluster ServiceAccount. */
  kubeconfig?: string;
  audiences: string[];
}

const CACHE_MS = 60_000;
const MAX_CACHED = 10_000;
const SERVICE_ACCOUNT = /^system:serviceaccount:([^:]+):([^:]+)$/;

/** Kubernetes ServiceAccount tokens, checked by the API server (the third authenticator in the chain); answers are cached for 60 s. */
export class TokenReviewAuthenticator {
  private readonly api: AuthenticationV1Api;
  private readonly audiences: string[];
  private readonly cache = new Map<string, { principal?: Principal; expires: number }>();

  constructor(config: TokenReviewConfig) {
    const kubeConfig = new KubeConfig();
    if (config.kubeconfig) kubeConfig.loadFromFile(config.kubeconfig);
    else kubeConfig.loadFromCluster();
    this.api = kubeConfig.makeApiClient(AuthenticationV1Api);
    this.audiences = config.audiences;
  }

  /** The principal for a ServiceAccount token, or undefined when the API server does not vouch for it. */
  async find(token: string): Promise<Principal | undefined> {
    const key = sha256Hex(`${token}\n${this.audiences.join(",")}`);
    const cached = this.cache.get(key);
    if (cached && cached.expires > Date.now()) return cached.principal;
    const principal = await this.review(token);
    if (this.cache.size >= MAX_CACHED) this.cache.delete(this.cache.keys().next().value!);
    this.cache.set(key, { principal, expires: Date.now() + CACHE_MS });
    return principal;
  }

  private async review(token: string): Promise<Principal | undefined> {
    let review;
    try {
      review = await this.api.createTokenReview({
        body: { apiVersion: "authentication.k8s.io/v1", kind: "TokenReview", spec: { token, ...(this.audiences.length ? { audiences: this.audiences } : {}) } },
      });
    } catch {
      throw new OrkaError("unavailable", "token review is unavailable");
    }
    const user = review.status?.user;
    if (!review.status?.authenticated || !user?.username) return undefined;
    // People (not ServiceAccounts) have no namespace of their own; they are bound to the default one.
    const namespace = SERVICE_ACCOUNT.exec(user.username)?.[1] ?? DEFAULT_NAMESPACE;
    return {
      name: user.username,
      admin: false,
      role: "user",
      namespace,
      requestedBy: { subject: user.uid, username: user.username, groups: user.groups, roles: ["user"] },
    };
  }
}
