const SECRET_PATTERNS: RegExp[] = [
  /\b(authorization|txn-token)\s*:\s*[^\s,;]+(\s+[^\s,;]+)?/gi,
  /\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g,
  /\bsk-[A-Za-z0-9_-]{16,}/g,
  /\bsk-ant-[A-Za-z0-9_-]{16,}/g,
  /\bgh[pousr]_[A-Za-z0-9]{20,}/g,
  /\bgithub_pat_[A-Za-z0-9_]{20,}/g,
  /\bxox[abposr]-[A-Za-z0-9-]{10,}/g,
  /\bAKIA[0-9A-Z]{16}\b/g,
  /\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{8,}/gi,
];

export const REDACTED = "[REDACTED]";

/** `key=value` / `key: value` where the key names a credential. */
const SECRET_PAIR = /\b([\w.-]*(api[_-]?key|token|secret|password|passwd|pwd|credential|private[_-]?key)[\w.-]*)(\s*[=:]\s*)("[^"]*"|'[^']*'|[^\s,;&]+)/gi;
/** "the token is X", "password was X". */
const SECRET_PHRASE = /\b(token|password|secret|api key|apikey|passphrase)(\s+(?:is|was|=)\s+)(\S+)/gi;
const URL_USERINFO = /\b([a-z][a-z0-9+.-]*:\/\/)[^\s/@:]+(:[^\s/@]*)?@/gi;

/**
 * Redaction before storage (memory spec A9): everything `redact` removes, plus credential-named
 * pairs, "the token is X" phrases, JWTs and URL userinfo.
 */
export function redactForStorage(text: string): string {
  return redact(text)
    .replace(SECRET_PAIR, (_m, key: string, _k, sep: string) => `${key}${sep}${REDACTED}`)
    .replace(SECRET_PHRASE, (_m, word: string, verb: string) => `${word}${verb}${REDACTED}`)
    .replace(URL_USERINFO, (_m, scheme: string) => `${scheme}${REDACTED}@`);
}

/** Removes known secret values and secret-looking tokens from text that leaves Orka's trust boundary. */
export function redact(text: string, knownSecrets: readonly string[] = []): string {
  let out = text;
  for (const secret of knownSecrets) if (secret.length >= 4) out = out.split(secret).join(REDACTED);
  for (const pattern of SECRET_PATTERNS) out = out.replace(pattern, REDACTED);
  return out;
}
