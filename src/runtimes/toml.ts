/**
 * A TOML basic string: JSON's escapes are TOML's, except that TOML also forbids DEL raw.
 * Config files CLIs read are written with this, so a model name or prompt cannot add a key.
 */
export function tomlString(value: string): string {
  return JSON.stringify(value).replace(/\x7f/g, "\\u007f");
}
