/**
 * Whether `query` has a `;` that ends a statement: one outside a string ('...', $$...$$ or
 * $tag$...$tag$), a quoted name ("...") and a comment (-- to the line's end, or /* ... *\/).
 * A `;` inside those is part of the one statement (`WHERE note = 'a;b'`).
 */
export function hasStatementBreak(query: string): boolean {
  let i = 0;
  while (i < query.length) {
    const c = query[i]!;
    if (c === ';') return true;
    if (c === "'" || c === '"') {
      // A doubled quote is one quote inside; an unterminated string runs to the end (DuckDB refuses it).
      i++;
      while (i < query.length && !(query[i] === c && query[i + 1] !== c)) i += query[i] === c ? 2 : 1;
      i++;
    } else if (c === '-' && query[i + 1] === '-') {
      const end = query.indexOf('\n', i);
      i = end < 0 ? query.length : end + 1;
    } else if (c === '/' && query[i + 1] === '*') {
      const end = query.indexOf('*/', i + 2);
      i = end < 0 ? query.length : end + 2;
    } else if (c === '$') {
      const tag = /^\$[A-Za-z_]*\$/.exec(query.slice(i))?.[0];
      if (tag) {
        const end = query.indexOf(tag, i + tag.length);
        i = end < 0 ? query.length : end + tag.length;
      } else i++;
    } else i++;
  }
  return false;
}
