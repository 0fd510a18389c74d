/** `text` cut to at most `limit` characters, an ellipsis marking the cut. */
export function clipText(text: string, limit: number): string {
  return text.length > limit ? `${text.slice(0, limit - 1)}…` : text;
}
