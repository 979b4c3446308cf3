import { DatabaseBusyError, ServerExceptionError } from './errors.js';
import type { QueryValue } from './transport.js';

/** MySQL/MariaDB errors that ask for the transaction to be restarted: 1213 deadlock, 1205 lock wait timeout. */
const TRANSIENT = /deadlock found|lock wait timeout exceeded|try restarting transaction|serialization failure|\b40001\b|\b1213\b|\b1205\b/i;

/**
 * MySQL/MariaDB client errors of a connection lost or refused (2006 gone away, 2013 lost during a
 * query, 1040 too many connections, 2002/2003 cannot connect): the site's database was out of
 * reach for a moment, not the request's fault. A contact write is an upsert by email, so sending
 * it again is safe.
 */
const CONNECTION = /server has gone away|lost connection to (mysql|mariadb)? ?server|too many connections|can't connect to (local )?(mysql|mariadb)? ?server|\b(2002|2003|2006|2013|1040)\b/i;

/** How to fix each parameter the client sends that can reach the server's SQL. */
const FIXES: Record<string, string> = {
  per_page: 'send a page size of 1 or more (CRM_PAGE_SIZE, or the page size of the command)',
  page: 'send a page number of 1 or more',
  sort_by: 'sort by a column this endpoint has (id, created_at or updated_at)',
  sort_type: 'send sort_type ASC or DESC',
  sort_order: 'send sort_order ASC or DESC',
  order_by: 'sort by a column this endpoint has (id, created_at or updated_at)',
  date_range: 'send dates as YYYY-MM-DD',
};

/**
 * Classifies a 423 (the real deployment's answer to any exception on the server) by its message.
 * A deadlock or lock timeout is transient and retryable; anything else was caused by the request,
 * and the error names the query parameter the server's SQL shows it choked on.
 */
export function classifyServerException(f: {
  route: string;
  statusCode: number;
  serverMessage: string | undefined;
  says: string;
  query: Record<string, QueryValue> | undefined;
}): DatabaseBusyError | ServerExceptionError {
  const opts = { statusCode: f.statusCode, route: f.route };
  if (f.serverMessage && TRANSIENT.test(f.serverMessage)) {
    return new DatabaseBusyError(
      `The CRM's database was busy on ${f.route} (423, a deadlock or lock timeout); the request is retried with backoff, and if this persists reduce CRM_MAX_CONCURRENCY${f.says}`,
      opts,
    );
  }
  if (f.serverMessage && CONNECTION.test(f.serverMessage)) {
    return new DatabaseBusyError(
      `The CRM lost its database connection on ${f.route} (423); the request is retried with backoff, and if this persists the site's database server is down or overloaded: ask the site's administrator${f.says}`,
      opts,
    );
  }
  const parameter = blamedParameter(f.serverMessage ?? '', f.query ?? {});
  if (parameter) {
    const value = String(f.query?.[parameter] ?? '').slice(0, 40);
    const fix = FIXES[parameter] ?? `change or drop the ${parameter} parameter`;
    return new ServerExceptionError(`The CRM failed on ${f.route} (423, an SQL error) because of the ${parameter} parameter (${parameter}=${value}): ${fix}${f.says}`, { ...opts, parameter });
  }
  // A read's parameters reach the server's SQL; a write's fields are checked before they are sent.
  const hint =
    Object.keys(f.query ?? {}).length > 0
      ? 'this is usually a bad parameter (sort field, page size, date range): check the parameters of the request'
      : "the site's error log has the details, and its administrator can tell whether a plugin or the database failed";
  return new ServerExceptionError(`The CRM raised an exception on ${f.route} (423, a database error); ${hint}${f.says}`, opts);
}

/** The query parameter an SQL or date error points at, if the message shows which one. */
export function blamedParameter(message: string, query: Record<string, QueryValue>): string | undefined {
  const entries = Object.entries(query).filter(([, v]) => v !== undefined && v !== null);
  // "Unknown column 'bogus' in 'ORDER BY'": the parameter whose value the server took for a column.
  const column = /unknown column '([^']{1,80})'/i.exec(message)?.[1];
  if (column) {
    const hit = entries.find(([, v]) => (Array.isArray(v) ? v.map(String) : [String(v)]).includes(column));
    if (hit) return hit[0];
  }
  const sql = /\(SQL: ([\s\S]*)\)\s*$/.exec(message)?.[1] ?? '';
  // A page size the server turned into no LIMIT (per_page=-1 gives "... offset 0" and a syntax error).
  if (/error in your SQL syntax/i.test(message) && !/\blimit\b/i.test(sql)) {
    if (entries.some(([k]) => k === 'per_page')) return 'per_page';
  }
  const negative = entries.find(([k, v]) => (k === 'per_page' || k === 'page') && Number(v) < 1);
  if (negative) return negative[0];
  if (/DateTime|date|time string/i.test(message) && !sql) {
    const date = entries.find(([k]) => /date/i.test(k));
    if (date) return date[0];
  }
  return undefined;
}
