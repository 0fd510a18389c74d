import type { ReplaySpec, ScriptedTurn } from "../resources/provider.ts";
import { replayModel } from "./replay.ts";
import type { ModelClient } from "./model.ts";
import { openAIModel } from "./openai.ts";
import { scriptedModel } from "./scripted.ts";
import { OrkaError } from "../util/errors.ts";

/** Everything the worker needs to reach one model: resolved by the controller, passed in the env contract. */
export interface ModelEndpoint {
  /** The Provider resource name, for messages and events. */
  name: string;
  type: "anthropic" | "openai" | "azure-openai" | "scripted" | "replay";
  model: string;
  baseURL?: string;
  apiKey?: string;
  azure?: { deployment?: string; apiVersion?: string };
  /** A scripted Provider's turns; a script file is read by the server, so the worker never opens one. */
  script?: { turns: ScriptedTurn[] };
  replay?: ReplaySpec;
  /** How long one call may take; unset, the server's default deadline applies. */
  timeoutMs?: number;
}

/** The client for one endpoint; `timeoutMs` is the deadline it is called with, which its transport must not cut short. */
export function createModelClient(endpoint: ModelEndpoint, timeoutMs: number): ModelClient {
  switch (endpoint.type) {
    case "scripted":
      if (!endpoint.script) throw new OrkaError("failed_precondition", `scripted provider ${endpoint.name} has no turns`);
      return scriptedModel(endpoint.script.turns);
    case "replay":
      if (!endpoint.replay) throw new OrkaError("failed_precondition", `replay provider ${endpoint.name} has no recording`);
      return replayModel(endpoint.replay);
    case "anthropic": {
      const apiKey = requireKey(endpoint);
      return loadedOnFirstCall("anthropic", async () => (await import("./anthropic.ts")).anthropicModel({ apiKey, baseURL: endpoint.baseURL, timeoutMs }));
    }
    case "openai":
      return openAIModel({ apiKey: requireKey(endpoint), baseURL: endpoint.baseURL, timeoutMs });
    case "azure-openai":
      return openAIModel({ apiKey: requireKey(endpoint), baseURL: endpoint.baseURL, azure: endpoint.azure ?? {}, timeoutMs });
  }
}

/** A client whose SDK is loaded by its first call: the Anthropic SDK is tens of MiB in every worker process, needed by few. */
function loadedOnFirstCall(provider: string, load: () => Promise<ModelClient>): ModelClient {
  let client: Promise<ModelClient> | undefined;
  return {
    provider,
    complete: async (request) => (await (client ??= load())).complete(request),
  };
}

function requireKey(endpoint: ModelEndpoint): string {
  if (!endpoint.apiKey) throw new OrkaError("failed_precondition", `API key for ${endpoint.name} not found`);
  return endpoint.apiKey;
}
