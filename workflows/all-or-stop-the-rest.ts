import { CancellationScope } from '@temporalio/workflow';

/**
 * Runs the tasks at once. When one fails, the others are cancelled, and its error is thrown once
 * they have all stopped: a failed scan has no range still loading after the run reports it.
 */
export async function allOrStopTheRest(tasks: readonly (() => Promise<void>)[]): Promise<void> {
  const scope = new CancellationScope();
  let failure: { err: unknown } | undefined;
  await Promise.all(
    tasks.map((task) =>
      scope.run(task).catch((err: unknown) => {
        if (failure) return;
        failure = { err };
        scope.cancel();
      }),
    ),
  );
  if (failure) throw failure.err;
}
