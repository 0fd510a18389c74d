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
 * Redaction before storage: everything `redact` removes, plus credential-named
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
const MIN_SECRET_LENGTH = 8;

/**
 * The ways a value shows up when an upstream echoes it: as is, escaped inside JSON, URL-encoded,
 * and base64 (a Secret holding `user:pass` is what a Basic Authorization header carries).
 */
function formsOf(value: string): string[] {
  if (value.length < MIN_SECRET_LENGTH) return [];
  const base64 = Buffer.from(value, "utf8").toString("base64");
  return [value, JSON.stringify(value).slice(1, -1), encodeURIComponent(value), base64, base64.replace(/=+$/, ""), Buffer.from(value, "utf8").toString("base64url")];
}

/**
 * Every form of every value, longest first across all of them: a value that is a prefix of another
 * must not be replaced first, or the longer one's tail would be left behind.
 */
function secretForms(values: Iterable<string>): string[] {
  return longestFirst([...values].flatMap(formsOf));
}

const longestFirst = (forms: string[]) => [...new Set(forms)].sort((a, b) => b.length - a.length);

/** Most strings hold no secret: they are returned as they are, without a copy per form. */
const replaceForms = (text: string, forms: readonly string[]) =>
  forms.some((form) => text.includes(form)) ? forms.reduce((out, form) => out.replaceAll(form, REDACTED), text) : text;

/** Replaces every form of the given values, and nothing else: text that merely looks secret is kept. */
export function redactValues(text: string, values: Iterable<string>): string {
  return replaceForms(text, secretForms(values));
}

/** The same through a parsed JSON body or a raw one: string values are scrubbed (keys are names, not data), a binary body is kept as it is. */
function redactFormsIn(body: unknown, forms: readonly string[]): unknown {
  if (forms.length === 0) return body;
  const scrub = (text: string) => replaceForms(text, forms);
  if (!Buffer.isBuffer(body)) return mapJsonStrings(body, scrub);
  const text = utf8OrUndefined(body);
  return text === undefined ? body : Buffer.from(scrub(text), "utf8");
}

interface Slot {
  value: unknown;
  parent: object;
  key: string | number;
}

/**
 * A copy of parsed JSON with `map` applied to every string value. A worker's body may be nested
 * as deeply as a model made its tool arguments, so the walk keeps its own stack instead of recursing.
 */
function mapJsonStrings(root: unknown, map: (text: string) => string): unknown {
  const top: unknown[] = [undefined];
  const slots: Slot[] = [{ value: root, parent: top, key: 0 }];
  for (let slot = slots.pop(); slot; slot = slots.pop()) {
    const { value } = slot;
    let copy = value;
    if (typeof value === "string") copy = map(value);
    else if (Array.isArray(value)) {
      const items: unknown[] = new Array(value.length);
      value.forEach((item, index) => slots.push({ value: item, parent: items, key: index }));
      copy = items;
    } else if (value && typeof value === "object") {
      const fields: Record<string, unknown> = {};
      // Keys are placed now, in their order, and filled as the walk reaches them.
      for (const [key, item] of Object.entries(value)) {
        Object.defineProperty(fields, key, { value: undefined, enumerable: true, writable: true, configurable: true });
        slots.push({ value: item, parent: fields, key });
      }
      copy = fields;
    }
    (slot.parent as Record<string | number, unknown>)[slot.key] = copy;
  }
  return top[0];
}

const strictUtf8 = new TextDecoder("utf-8", { fatal: true });
function utf8OrUndefined(bytes: Buffer): string | undefined {
  try {
    return strictUtf8.decode(bytes);
  } catch {
    return undefined;
  }
}

/**
 * The Secret values each Task's Provider and Tools use, so that everything stored or returned for
 * the Task can be scrubbed of them. Filled when an attempt starts (from the store, so a restarted
 * server learns them again when the Task resumes) and dropped when the Task finishes or is deleted.
 */
export class TaskSecrets {
  /** Each Task's forms, longest first, computed once per attempt rather than on every write. */
  private readonly formsByTask = new Map<string, string[]>();
  private readonly taskOfAttempt = new Map<string, string>();

  remember(namespace: string, task: string, attemptId: string, values: Iterable<string | undefined>): void {
    const key = taskKey(namespace, task);
    this.formsByTask.set(key, secretForms([...values].filter((v): v is string => !!v)));
    this.taskOfAttempt.set(attemptId, key);
  }

  forget(namespace: string, task: string): void {
    const key = taskKey(namespace, task);
    this.formsByTask.delete(key);
    for (const [attempt, owner] of this.taskOfAttempt) if (owner === key) this.taskOfAttempt.delete(attempt);
  }

  /** `text` without the Task's Secret values (nor `extra` ones, such as a credential read just now). */
  redact(namespace: string, task: string, text: string, extra: readonly string[] = []): string {
    const forms = this.formsOf(taskKey(namespace, task));
    return replaceForms(text, extra.length === 0 ? forms : longestFirst([...forms, ...secretForms(extra)]));
  }

  /** A request body a worker sent for its Task (parsed JSON or raw bytes), without the Task's Secret values. */
  redactBody(namespace: string, task: string, body: unknown): unknown {
    return redactFormsIn(body, this.formsOf(taskKey(namespace, task)));
  }

  /** The same for what an attempt reports about itself (its failure reason). */
  redactForAttempt(attemptId: string, text: string): string {
    const key = this.taskOfAttempt.get(attemptId);
    return key ? replaceForms(text, this.formsOf(key)) : text;
  }

  /** How many characters of a stream must be held back so that a value split across two writes is still found. */
  longestForm(namespace: string, task: string): number {
    return this.formsOf(taskKey(namespace, task))[0]?.length ?? 0;
  }

  private formsOf(key: string): string[] {
    return this.formsByTask.get(key) ?? [];
  }
}

const taskKey = (namespace: string, task: string) => `${namespace}/${task}`;
