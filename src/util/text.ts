/** `text` cut to at most `limit` characters, an ellipsis marking the cut. */
export function clipText(text: string, limit: number): string {
  return text.length > limit ? `${text.slice(0, limit - 1)}…` : text;
}

/** `text` cut to at most `limit` bytes of UTF-8, never inside a character; `cut` says whether anything was left out. */
export function cutUtf8(text: string, limit: number): { text: string; cut: boolean } {
  const bytes = Buffer.from(text, "utf8");
  if (bytes.length <= limit) return { text, cut: false };
  let end = limit;
  while (end > 0 && (bytes[end] & 0xc0) === 0x80) end--;
  return { text: bytes.subarray(0, end).toString("utf8"), cut: true };
}

/** Length in Unicode code points, as GitHub counts a title's characters (an emoji is one). */
export function codePointLength(text: string): number {
  let count = 0;
  for (const _ of text) count++;
  return count;
}
