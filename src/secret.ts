import { inspect } from 'node:util';

/**
 * Wraps a credential so that it cannot leak by accident: printing, logging, JSON-encoding or
 * string-interpolating it shows `[redacted]`. Only `reveal()` gives the value.
 */
export class Secret {
  readonly #value: string;

  constructor(value: string) {
    this.#value = value;
  }

  reveal(): string {
    return this.#value;
  }

  get isEmpty(): boolean {
    return this.#value.length === 0;
  }

  toString(): string {
    return '[redacted]';
  }

  toJSON(): string {
    return '[redacted]';
  }

  [inspect.custom](): string {
    return 'Secret([redacted])';
  }
}

/** Replaces every occurrence of each secret in `text` (also its base64 and URL-encoded forms). */
export function redact(text: string, secrets: readonly (Secret | string | undefined)[]): string {
  let out = text;
  for (const s of secrets) {
    const value = s instanceof Secret ? s.reveal() : s;
    if (!value || value.length < 4) continue;
    for (const form of [value, encodeURIComponent(value), Buffer.from(value).toString('base64')]) {
      out = out.split(form).join('[redacted]');
    }
  }
  return out;
}
