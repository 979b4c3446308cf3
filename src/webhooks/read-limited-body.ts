import type { IncomingMessage } from 'node:http';

/** A body source that enforces the limit itself (the HTTP adapter, reading the socket directly). */
export interface LimitedBodySource {
  /** `expected`: the declared Content-Length (already checked against `limit`), when there is one. */
  readLimited(limit: number, expected?: number): Promise<Buffer | null>;
}

export type RequestBody = AsyncIterable<Uint8Array> | Uint8Array | LimitedBodySource;

/** Reads a request body, stopping as soon as it exceeds `limit` bytes; null means too large. */
export async function readLimitedBody(body: RequestBody, limit: number, expected?: number): Promise<Buffer | null> {
  if (body instanceof Uint8Array) return body.length > limit ? null : Buffer.from(body.buffer, body.byteOffset, body.length);
  if ('readLimited' in body) return body.readLimited(limit, expected);
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
 * (not kept, not destroyed) so that the client still receives the 413. A body that arrives in one
 * chunk is that chunk (the usual delivery); one in several, with a Content-Length, is copied into
 * one buffer of that length as it arrives, with no list of chunks and no concatenation. `done` is
 * called once, from the request's last event (no promise: the receiver's thread pays for each).
 */
export function readIncomingBody(req: IncomingMessage, limit: number, expected: number | undefined, done: (err: Error | null, body: Buffer | null) => void): void {
  let first: Buffer | undefined;
  let whole: Buffer | undefined;
  let chunks: Buffer[] | undefined;
  let total = 0;
  const onData = (chunk: Buffer): void => {
    const at = total;
    total += chunk.length;
    if (total > limit) {
      cleanup();
      first = whole = chunks = undefined;
      req.resume();
      done(null, null);
      return;
    }
    if (at === 0) {
      first = chunk;
      return;
    }
    // node:http ends the body at its Content-Length: more is a second request, never this body.
    if (expected !== undefined && total <= expected) {
      if (!whole) {
        whole = Buffer.allocUnsafe(expected);
        first!.copy(whole, 0);
      }
      chunk.copy(whole, at);
      return;
    }
    if (whole) {
      chunks = [whole.subarray(0, at)];
      whole = undefined;
    }
    (chunks ??= [first!]).push(chunk);
  };
  const onEnd = (): void => {
    cleanup();
    if (whole) done(null, total === whole.length ? whole : whole.subarray(0, total));
    else if (chunks) done(null, Buffer.concat(chunks, total));
    else done(null, first ?? Buffer.alloc(0));
  };
  const onError = (err: Error): void => {
    cleanup();
    done(err, null);
  };
  const cleanup = (): void => {
    req.off('data', onData);
    req.off('end', onEnd);
    req.off('error', onError);
  };
  req.on('data', onData);
  req.on('end', onEnd);
  req.on('error', onError);
}
