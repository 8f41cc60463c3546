/**
 * What a run takes from the environment, resolved here so the engine reads no variable:
 * the `FLEETBOOK_VAR_*` variables expressions see (`env`), where large values go
 * (`FLEETBOOK_HOME/outputs`), how long ended runs are kept (`FLEETBOOK_RETENTION`), and how
 * long a write of unknown outcome is given to land before its state is read
 * (`FLEETBOOK_RECONCILE_SETTLE`).
 */
import { UsageError } from '../errors/index.js';
import { parseDuration } from '../expressions/index.js';
import { outputsDirOf, resolveFleetbookHome } from '../store/index.js';
import { CliErrorCode } from './error-codes.js';

export interface RunSettings {
  env: Record<string, string | undefined>;
  outputsDir: string;
  /** Runs that ended longer ago are pruned when a run ends; absent: none is. */
  retentionMs?: number;
  /** Absent: the engine's default. */
  reconcileSettleMs?: number;
}

/**
 * `FLEETBOOK_RETENTION` in milliseconds (a duration: `30d`, `12h`), undefined when unset. A
 * value that is not one is refused before the run starts, not discovered when it ends.
 */
export function retentionOf(env: Record<string, string | undefined>): number | undefined {
  const text = env.FLEETBOOK_RETENTION?.trim();
  if (!text) return undefined;
  const ms = /^\d+$/.test(text) ? undefined : parseDuration(text, { maxMs: Number.MAX_SAFE_INTEGER });
  if (ms === undefined || ms <= 0)
    throw new UsageError(
      `FLEETBOOK_RETENTION must be a duration like 30d or 12h, got '${text}'`,
      CliErrorCode.invalidRetention,
    );
  return ms;
}

/**
 * `FLEETBOOK_RECONCILE_SETTLE` in milliseconds (a duration, or `0` to read at once), undefined
 * when unset. Refused before the run starts when it is not one.
 */
export function reconcileSettleOf(env: Record<string, string | undefined>): number | undefined {
  const text = env.FLEETBOOK_RECONCILE_SETTLE?.trim();
  if (!text) return undefined;
  // A bare number other than 0 would be milliseconds, which nobody means here.
  const ms = text !== '0' && /^\d+$/.test(text) ? undefined : parseDuration(text, { maxMs: 3_600_000 });
  if (ms === undefined)
    throw new UsageError(
      `FLEETBOOK_RECONCILE_SETTLE must be a duration like 5s or 1m (at most 1h), or 0, got '${text}'`,
      CliErrorCode.invalidReconcileSettle,
    );
  return ms;
}

export function runSettingsOf(env: Record<string, string | undefined>): RunSettings {
  const retentionMs = retentionOf(env);
  const reconcileSettleMs = reconcileSettleOf(env);
  return {
    env,
    outputsDir: outputsDirOf(resolveFleetbookHome({ env })),
    ...(retentionMs === undefined ? {} : { retentionMs }),
    ...(reconcileSettleMs === undefined ? {} : { reconcileSettleMs }),
  };
}
