import { CrmsyncError } from '../errors.js';

/** The `--from` value cannot be read as a table, view or query. */
export class PushSourceError extends CrmsyncError {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super('PUSH_SOURCE_INVALID', message, options);
  }
}

/** The push plan for a run is missing (pruned, or the run id is wrong). */
export class PushPlanMissingError extends CrmsyncError {
  constructor(runId: string) {
    super('PUSH_PLAN_MISSING', `No push plan is stored for run "${runId}"; start a new push with \`crmsync push --from ...\`.`);
  }
}
