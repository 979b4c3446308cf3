import type { PushLedger, SendFailure, SendSuccess } from '../warehouse/push-ledger-store.js';

type Entry = { kind: 'success'; s: SendSuccess } | { kind: 'failure'; f: SendFailure };

interface Pending {
  entry: Entry;
  resolve: () => void;
  reject: (err: unknown) => void;
}

/**
 * Group commit for ledger writes: outcomes that arrive while a write runs go out together in the
 * next one. Each caller's promise resolves once its own row is in the ledger, so a row counts as
 * done only after it is durable; writes never overlap on the one DuckDB connection.
 */
export class LedgerWriter {
  #pending: Pending[] = [];
  #flushing = false;

  constructor(private readonly ledger: PushLedger) {}

  success(s: SendSuccess): Promise<void> {
    return this.#enqueue({ kind: 'success', s });
  }

  failure(f: SendFailure): Promise<void> {
    return this.#enqueue({ kind: 'failure', f });
  }

  #enqueue(entry: Entry): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.#pending.push({ entry, resolve, reject });
      // #flush settles every entry's own promise, so a failure reaches its caller there.
      if (!this.#flushing) this.#flush().catch(reject);
    });
  }

  async #flush(): Promise<void> {
    this.#flushing = true;
    try {
      while (this.#pending.length > 0) {
        const batch = this.#pending.splice(0);
        try {
          const successes = batch.flatMap((p) => (p.entry.kind === 'success' ? [p.entry.s] : []));
          if (successes.length > 0) await this.ledger.recordSuccesses(successes);
          for (const p of batch) if (p.entry.kind === 'failure') await this.ledger.recordFailure(p.entry.f);
          for (const p of batch) p.resolve();
        } catch (err) {
          for (const p of batch) p.reject(err);
        }
      }
    } finally {
      this.#flushing = false;
    }
  }
}
