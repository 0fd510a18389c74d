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
  let out = redactValues(text, knownSecrets);
  for (const pattern of SECRET_PATTERNS) out = out.replace(pattern, REDACTED);
  return out;
}

/** Shorter values would blank out ordinary words. */
const MIN_SECRET_LENGTH = 4;

/**
 * The ways a value shows up when an upstream echoes it: as is, escaped inside JSON, URL-encoded,
 * and base64 (a Secret holding `user:pass` is what a Basic Authorization header carries).
 */
function secretForms(value: string): string[] {
  if (value.length < MIN_SECRET_LENGTH) return [];
  const base64 = Buffer.from(value, "utf8").toString("base64");
  const forms = [value, JSON.stringify(value).slice(1, -1), encodeURIComponent(value), base64, base64.replace(/=+$/, ""), Buffer.from(value, "utf8").toString("base64url")];
  return [...new Set(forms)].sort((a, b) => b.length - a.length);
}

/** Replaces every form of the given values, and nothing else: text that merely looks secret is kept. */
export function redactValues(text: string, values: Iterable<string>): string {
  let out = text;
  for (const value of values) for (const form of secretForms(value)) out = out.replaceAll(form, REDACTED);
  return out;
}

/**
 * The Secret values each Task's Provider and Tools use, so that everything stored or returned for
 * the Task can be scrubbed of them. Filled when an attempt starts (from the store, so a restarted
 * server learns them again when the Task resumes) and dropped with the Task's data.
 */
export class TaskSecrets {
  private readonly byTask = new Map<string, string[]>();
  private readonly taskOfAttempt = new Map<string, string>();

  remember(namespace: string, task: string, attemptId: string, values: Iterable<string | undefined>): void {
    const key = taskKey(namespace, task);
    this.byTask.set(key, [...new Set([...values].filter((v): v is string => !!v))]);
    this.taskOfAttempt.set(attemptId, key);
  }

  forget(namespace: string, task: string): void {
    const key = taskKey(namespace, task);
    this.byTask.delete(key);
    for (const [attempt, owner] of this.taskOfAttempt) if (owner === key) this.taskOfAttempt.delete(attempt);
  }

  /** `text` without the Task's Secret values (nor `extra` ones, such as a credential read just now). */
  redact(namespace: string, task: string, text: string, extra: readonly string[] = []): string {
    return redactValues(text, [...(this.byTask.get(taskKey(namespace, task)) ?? []), ...extra]);
  }

  /** The same for what an attempt reports about itself (its failure reason). */
  redactForAttempt(attemptId: string, text: string): string {
    const key = this.taskOfAttempt.get(attemptId);
    return key ? redactValues(text, this.byTask.get(key) ?? []) : text;
  }
}

const taskKey = (namespace: string, task: string) => `${namespace}/${task}`;
