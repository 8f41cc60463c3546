/**
 * What a run takes from the place it is started in rather than from its playbook: where large
 * values go, how long ended runs are kept, how long a write of unknown outcome is given to land,
 * where `email` steps send.
 * The CLI resolves them from the environment; the scheduler, the worker and the server pass
 * them on to every run they drive, unchanged.
 */
import type { RunOptions } from './run-options.js';

export type RunEnvironment = Pick<RunOptions, 'outputsDir' | 'retentionMs' | 'reconcileSettleMs' | 'mailer'>;

/** The settings of `options` that are set, to spread into a run's options. */
export function runEnvironmentOf(options: RunEnvironment): RunEnvironment {
  return {
    ...(options.outputsDir ? { outputsDir: options.outputsDir } : {}),
    ...(options.retentionMs === undefined ? {} : { retentionMs: options.retentionMs }),
    ...(options.reconcileSettleMs === undefined ? {} : { reconcileSettleMs: options.reconcileSettleMs }),
    ...(options.mailer === undefined ? {} : { mailer: options.mailer }),
  };
}
