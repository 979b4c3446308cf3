/** The slice of the warehouse the pusher needs: parameterized SQL returning plain rows. */
export interface SqlRunner {
  query(sql: string, params?: readonly unknown[]): Promise<Record<string, unknown>[]>;
}

/** A UTC timestamp literal DuckDB casts to TIMESTAMP. */
export function sqlTimestamp(date: Date): string {
  return date.toISOString().replace('T', ' ').replace('Z', '');
}
