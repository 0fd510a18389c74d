import { ANNOTATION, type ObjectMeta } from "../../resources/meta.ts";
import { OrkaError } from "../../util/errors.ts";

/** Users may set this one Orka annotation: it only removes tools. */
const CLIENT_SETTABLE_ANNOTATIONS = new Set<string>([ANNOTATION.disableCoordinationToolInjection]);

/** `orka.ai/*` labels and annotations carry provenance only Orka may write. */
export function checkReservedMetadata(metadata: Pick<ObjectMeta, "labels" | "annotations">): void {
  for (const key of Object.keys(metadata.annotations ?? {})) {
    if (key.startsWith("orka.ai/") && !CLIENT_SETTABLE_ANNOTATIONS.has(key)) {
      throw new OrkaError("invalid_argument", `annotation "${key}" is reserved`);
    }
  }
  for (const key of Object.keys(metadata.labels ?? {})) {
    if (key.startsWith("orka.ai/")) throw new OrkaError("invalid_argument", `label "${key}" is reserved`);
  }
}

const CREDENTIAL_HEADER = /^(authorization|proxy-authorization|cookie|x-api-key|api-key)$|token|secret|password|credential/i;

export function isCredentialHeader(name: string): boolean {
  return CREDENTIAL_HEADER.test(name);
}

export function hasUserinfo(url: string | undefined): boolean {
  if (!url) return false;
  try {
    const parsed = new URL(url);
    return parsed.username !== "" || parsed.password !== "";
  } catch {
    return false;
  }
}
