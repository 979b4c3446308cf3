/** Pure helper shared by workflows: proves local imports bundle. */
export function formatGreeting(greeting: string): string {
  return `${greeting}!`;
}
