/** Reads a request body, stopping as soon as it exceeds `limit` bytes; null means too large. */
export async function readLimitedBody(body: AsyncIterable<Uint8Array> | Uint8Array, limit: number): Promise<Buffer | null> {
  if (body instanceof Uint8Array) return body.length > limit ? null : Buffer.from(body.buffer, body.byteOffset, body.length);
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of body) {
    total += chunk.length;
    if (total > limit) return null;
    chunks.push(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.length));
  }
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, total);
}
