const TABLES = ['subscribers', 'tags', 'lists', 'campaigns', 'funnels', 'companies', 'webhooks'];

/**
 * The body message of the real deployment's 423 for a database deadlock or lock wait timeout: the
 * MariaDB error, then the statement, as in the captured 423s (`GET_campaigns_sort_by_bogus.json`).
 */
export function deadlockMessage(path: string, lockWait: boolean): string {
  const segment = path.split('/')[1] ?? '';
  const table = `wp_fc_${TABLES.includes(segment) ? segment : 'subscribers'}`;
  const error = lockWait ? 'Lock wait timeout exceeded; try restarting transaction' : 'Deadlock found when trying to get lock; try restarting transaction';
  return `${error} (SQL: select * from \`${table}\` order by \`id\` desc limit 15 offset 0)`;
}
