import { quoteLiteral } from './quote.js';

/** The query a person runs with `crmsync query` to see why a source's rows were not pushed. */
export function pushDeadLettersQuery(source: string): string {
  return `SELECT email, error_field, error_message FROM push_dead_letters WHERE source = ${quoteLiteral(source)}`;
}
