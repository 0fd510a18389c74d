import type { Resource } from "../resources/meta.ts";
import type { ToolSpec, ToolStatus } from "../resources/tool.ts";
import { canonicalDigest } from "../util/hash.ts";

/**
 * What a coding-agent session froze of a custom Tool when it started: the Tool's identity (uid), the
 * version of its spec (generation) and the spec itself. A call is refused when the Tool's digest no
 * longer matches, so an edit or a delete-and-recreate never takes effect inside a running session.
 */
export function customToolDigest(tool: Resource<ToolSpec, ToolStatus>): string {
  return canonicalDigest({ uid: tool.metadata.uid ?? null, generation: tool.metadata.generation ?? null, spec: tool.spec });
}
