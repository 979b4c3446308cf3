/** An option's name as `--help` spells it: `maxRows` is `--max-rows`. */
export function optionFlag(key: PropertyKey): string {
  return `--${String(key).replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
}

/** A command's refused options, each named as the user types it, with the value given. */
export function describeOptionIssues(issues: readonly { path: readonly PropertyKey[]; message: string }[], raw: Record<string, unknown>): string {
  return issues
    .map((i) => {
      const key = i.path[0];
      const given = key === undefined ? undefined : raw[String(key)];
      const value = typeof given === 'string' ? ` "${given.slice(0, 40)}"` : '';
      return `${key === undefined ? '(options)' : optionFlag(key)}${value}: ${i.message}`;
    })
    .join('; ');
}
