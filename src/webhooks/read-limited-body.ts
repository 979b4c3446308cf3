import type { IncomingMessage } from 'node:http';

/** A body source that enforces the limit itself (the HTTP adapter, reading the socket directly). */
export interface LimitedBodySource {
  readLimited(limit: number): Promise<Buffer | null>;
}

export type RequestBody = AsyncIterable<Uint8Array> | Uint8Array | LimitedBodySource;

/** Reads a request body, stopping as soon as it exceeds `limit` bytes; null means too large. */
export async function readLimitedBody(body: RequestBody, limit: number): Promise<Buffer | null> {
  if (body instanceof Uint8Array) return body.length > limit ? null : Buffer.from(body.buffer, body.byteOffset, body.length);
  if ('readLimited' in body) return body.readLimited(limit);
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of body) {
    total += chunk.length;
    if (total > limit) return null;
    chunks.push(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.length));
  }
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, total);
}

/**
 * The body of a node:http request, buffered only up to the limit. Past it, the rest is drained
 * (not kept, not destroyed) so that the client still receives the 413.
 */
export function incomingBody(req: IncomingMessage): LimitedBodySource {
  return {
    readLimited: (limit) =>
      new Promise<Buffer | null>((resolve, reject) => {
        const chunks: Buffer[] = [];
        let total = 0;
        const onData = (chunk: Buffer): void => {
          total += chunk.length;
          if (total > limit) {
            cleanup();
            chunks.length = 0;
            req.resume();
            resolve(null);
            return;
          }
          chunks.push(chunk);
        };
        const onEnd = (): void => {
          cleanup();
          resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, total));
        };
        const onError = (err: Error): void => {
          cleanup();
          reject(err);
        };
        const cleanup = (): void => {
          req.off('data', onData);
          req.off('end', onEnd);
          req.off('error', onError);
        };
        req.on('data', onData);
        req.on('end', onEnd);
        req.on('error', onError);
      }),
  };
}
