import { Pool } from 'undici';

export interface BareTarget {
  /** The simulator's base URL (origin and API path). */
  url: URL;
  /** The Authorization header value. */
  auth: string;
}

/**
 * The client benchmarks' baseline: `pages` contact pages fetched by a bare undici pool at
 * `concurrency`, each body read and JSON-parsed (no validation, no limiter). Returns rows read.
 */
export async function bareFetch(target: BareTarget, pages: number, perPage: number, concurrency: number): Promise<number> {
  const { url, auth } = target;
  const pool = new Pool(url.origin, { connections: concurrency, pipelining: 1 });
  try {
    let next = 1;
    let rows = 0;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next <= pages) {
          const page = next++;
          const res = await pool.request({
            path: `${url.pathname}/subscribers?page=${page}&per_page=${perPage}&order_by=id&order_type=ASC&sort_by=id&sort_type=ASC`,
            method: 'GET',
            headers: { authorization: auth, accept: 'application/json' },
          });
          const body = (await res.body.json()) as { subscribers: { data: unknown[] } };
          rows += body.subscribers.data.length;
        }
      }),
    );
    return rows;
  } finally {
    await pool.close();
  }
}
