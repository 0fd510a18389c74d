/**
 * Reads at most `maxBytes` of a byte stream (an HTTP body, a file); `capped` says whether more was
 * cut off. It stops reading there, so a body or file that never ends cannot fill memory.
 */
export async function readCapped(stream: AsyncIterable<Uint8Array>, maxBytes: number): Promise<{ body: Buffer; capped: boolean }> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    const room = maxBytes - size;
    chunks.push(Buffer.from(chunk.subarray(0, room)));
    size += Math.min(room, chunk.length);
    if (chunk.length > room) return { body: Buffer.concat(chunks), capped: true };
  }
  return { body: Buffer.concat(chunks), capped: false };
}
