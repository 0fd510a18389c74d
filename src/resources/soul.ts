import { z } from "zod";
import { sha256Hex } from "../util/hash.ts";

export const MAX_SOUL_BYTES = 8192;
const DIGEST = /^sha256:[0-9a-f]{64}$/;

/** The fields of an Agent's persona source; `soulSchema` adds the rules. */
export const soulFields = z.strictObject({
  inline: z.string().optional().describe("The persona text"),
  configMapRef: z.strictObject({ name: z.string().min(1), key: z.string().min(1) }).optional(),
  digest: z.string().regex(DIGEST, "must be sha256: followed by 64 lowercase hex digits").optional().describe("sha256:<64 hex> of the text; required with configMapRef"),
});

/**
 * `spec.soul`, an Agent's persona: inline text, or a ConfigMap key pinned by its digest. Exactly one
 * source; the text is non-empty, well-formed, without NUL, at most 8 KiB. Too long is refused, never cut.
 */
export const soulSchema = soulFields.superRefine((soul, ctx) => {
  const issue = (path: string, message: string) => ctx.addIssue({ code: "custom", path: [path], message });
  if ((soul.inline === undefined) === (soul.configMapRef === undefined)) return issue("inline", "set exactly one of inline and configMapRef");
  if (soul.configMapRef) {
    if (soul.digest === undefined) issue("digest", "is required with configMapRef: sha256:<64 hex> of the text");
    return;
  }
  const text = soul.inline!;
  const bytes = Buffer.byteLength(text);
  if (!text.trim()) issue("inline", "must not be empty");
  else if (!text.isWellFormed() || text.includes("\0")) issue("inline", "must be UTF-8 text without NUL characters");
  else if (bytes > MAX_SOUL_BYTES) issue("inline", `is ${bytes} bytes; at most ${MAX_SOUL_BYTES} are allowed`);
  else if (soul.digest !== undefined && soul.digest !== `sha256:${sha256Hex(text)}`) issue("digest", "does not match the inline text");
});
export type Soul = z.infer<typeof soulSchema>;
