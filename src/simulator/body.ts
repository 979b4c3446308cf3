import type { IncomingMessage } from 'node:http';
import { SimError } from './sim-error.js';

/** Reads and parses a request body (JSON or form-encoded) with a size limit. */
export async function readBody(req: IncomingMessage, maxBytes: number): Promise<Record<string, unknown>> {
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > maxBytes) throw new SimError(413, 'rest_payload_too_large', `Request body over ${maxBytes} bytes; send smaller requests.`);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > maxBytes) throw new SimError(413, 'rest_payload_too_large', `Request body over ${maxBytes} bytes; send smaller requests.`);
    chunks.push(chunk as Buffer);
  }
  if (size === 0) return {};
  const text = Buffer.concat(chunks).toString('utf8');
  const type = String(req.headers['content-type'] ?? '');
  if (type.includes('application/x-www-form-urlencoded')) return formToObject(new URLSearchParams(text));
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
      throw new SimError(400, 'rest_invalid_json', 'The JSON body must be an object.');
    }
    return parsed as Record<string, unknown>;
  } catch (err) {
    if (err instanceof SimError) throw err;
    throw new SimError(400, 'rest_invalid_json', 'Invalid JSON body passed.', {
      status: 400,
      body: { code: 'rest_invalid_json', message: 'Invalid JSON body passed.', data: { status: 400, json_error_code: 4, json_error_message: 'Syntax error' } },
    });
  }
}

/** `a=1&tags[]=2&tags[]=3&custom_values[color]=Red` into an object, as PHP would read it. */
export function formToObject(params: URLSearchParams): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of params) {
    const m = /^([^[\]]+)\[([^\]]*)\]$/.exec(key);
    if (!m) {
      out[key] = value;
      continue;
    }
    const [, name, sub] = m as unknown as [string, string, string];
    if (sub === '') {
      const arr = Array.isArray(out[name]) ? (out[name] as unknown[]) : [];
      arr.push(value);
      out[name] = arr;
    } else {
      const obj = typeof out[name] === 'object' && out[name] !== null && !Array.isArray(out[name]) ? (out[name] as Record<string, unknown>) : {};
      obj[sub] = value;
      out[name] = obj;
    }
  }
  return out;
}
