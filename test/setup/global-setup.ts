// Replaced by the Temporal harness (issue 2): starts one dev server for the whole run.
export function setup(): void {}
