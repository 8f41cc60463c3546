/** What `fleetbook runs list|show|prune` do (see runs.ts), imported when the command runs. */
import { UsageError, didYouMean } from '../../errors/index.js';
import { parseDuration } from '../../expressions/index.js';
import { userInfo } from 'node:os';
import { setTimeout as delay } from 'node:timers/promises';
import {
  RunStatus,
  RUN_LEASE_TTL_MS,
  buildStepTree,
  createJournalFold,
  foldJournalView,
  itemKind,
  logLineCollector,
  journalPages,
  lastHeartbeatMs,
  pruneRuns,
  withRunStore,
  outputsDirOf,
  worldsDirOf,
  resolveFleetbookHome,
  type JournalEvent,
  type JournalView,
  type LoggedLine,
  type RunRecord,
  type RunStore,
  type StepNode,
  type StepRecord,
  type WaitRecord,
} from '../../store/index.js';
import { describeWait } from '../../engine/index.js';
import { howToEndWait } from '../run-session.js';
import { findRun } from '../find-run.js';
import { postToServer, remoteRunSource, serverSettings, type RunSource } from '../remote-runs.js';
import { writeJsonStreamed } from '../json-stream.js';
import type { CliIo } from '../io.js';
import {
  isMachineFormat,
  outputFormat,
  painter,
  statusColour,
  writeMachine,
  type OutputFormat,
  type OutputOptions,
} from '../output.js';
import { formatLogLines, formatOutputs, formatRunLog, isWithin, logStepPaths, table } from './run-log.js';
import { formatStepTable, recordsShown } from './step-table.js';

/** Milliseconds as `450ms`, `12.3s`, `5m03s`, `1h02m`. */
function formatDuration(ms: number): string {
  if (ms < 1000) return `${ms}ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)}s`;
  const totalSeconds = Math.round(ms / 1000);
  const pad = (n: number) => String(n).padStart(2, '0');
  if (totalSeconds < 3600) return `${Math.floor(totalSeconds / 60)}m${pad(totalSeconds % 60)}s`;
  return `${Math.floor(totalSeconds / 3600)}h${pad(Math.floor((totalSeconds % 3600) / 60))}m`;
}

/** `2026-03-01 10:00:00Z`: ISO without the noise. */
function formatTime(iso: string | undefined): string {
  return iso === undefined ? '' : iso.replace('T', ' ').replace(/\.\d+Z$/, 'Z');
}

function runDurationMs(run: Pick<RunRecord, 'startedAt' | 'endedAt'>): number | undefined {
  return run.endedAt === undefined ? undefined : Date.parse(run.endedAt) - Date.parse(run.startedAt);
}

/**
 * `--since`/`--older-than` as an instant: an ISO date or time, or a duration back from now
 * with a unit (`7d`, `12h`, `1h30m`).
 */
export function parseInstant(option: string, text: string, now: Date): string {
  const trimmed = text.trim();
  // An age, not a timer: `90d` is fine here, unlike in a playbook.
  const durationMs = /^\d+$/.test(trimmed) ? undefined : parseDuration(trimmed, { maxMs: Number.MAX_SAFE_INTEGER });
  if (durationMs !== undefined) return new Date(now.getTime() - durationMs).toISOString();
  const dateMs = /^\d{4}-\d{2}-\d{2}/.test(trimmed) ? Date.parse(trimmed) : Number.NaN;
  if (!Number.isNaN(dateMs)) return new Date(dateMs).toISOString();
  throw new UsageError(
    `--${option} must be a duration like 7d, 12h or 1h30m, or a date like 2026-03-01, got '${text}'`,
    'INVALID_OPTION',
  );
}

function isStore(source: RunSource): source is RunSource & RunStore {
  return typeof (source as Partial<RunStore>).leaseHolder === 'function';
}

/**
 * What `runs` shows a run's status as: the store's, except a run the store says is `running`
 * whose lease lapsed or whose process is verifiably dead: it crashed (or was SIGKILLed) and
 * waits for `fleetbook resume`, as an interrupted run does.
 */
const CRASHED = 'crashed';
type ShownStatus = RunStatus | typeof CRASHED;
/** `lastHeartbeatAt`: when a running run's driver last renewed its lease. */
type ShownRun = Omit<RunRecord, 'status'> & { status: ShownStatus; lastHeartbeatAt?: string };

/**
 * A driver renews its lease every third of the TTL; one silent for half the TTL has missed a
 * renewal (killed on another host, or stuck) though its lease has not lapsed yet.
 */
const STALE_HEARTBEAT_MS = RUN_LEASE_TTL_MS / 2;

/**
 * Runs `work` with the runs of `FLEETBOOK_SERVER` when it is set (`remote-runs.ts`), else with
 * the store's.
 */
async function withRunSource<T>(env: NodeJS.ProcessEnv, work: (source: RunSource) => Promise<T>): Promise<T> {
  const server = serverSettings(env);
  if (server) return work(remoteRunSource(server));
  return withRunStore({ env }, work);
}

async function shownRun(store: RunSource, run: RunRecord): Promise<ShownRun> {
  // A server's run: the server's store is the one to ask about leases (it reads a dead driver's run `interrupted`).
  if (store.remote !== undefined) return run;
  // The store reads a running run whose lease lapsed `interrupted` (`RunStore.getRun`); one that never got its end written crashed.
  if (run.status === RunStatus.interrupted && run.endedAt === undefined) return { ...run, status: CRASHED };
  if (run.status !== RunStatus.running) return run;
  if (!isStore(store)) return run;
  const heartbeatMs = await lastHeartbeatMs(store, run.id);
  return heartbeatMs === undefined
    ? { ...run, status: CRASHED }
    : { ...run, lastHeartbeatAt: new Date(heartbeatMs).toISOString() };
}

/** `running (no heartbeat for 40s)` for a running run whose driver went quiet; the status otherwise. */
function statusText(run: ShownRun, nowMs: number): string {
  if (run.status !== RunStatus.running || run.lastHeartbeatAt === undefined) return run.status;
  const silentMs = nowMs - Date.parse(run.lastHeartbeatAt);
  return silentMs > STALE_HEARTBEAT_MS ? `running (no heartbeat for ${Math.round(silentMs / 1000)}s)` : run.status;
}

function parseStatus(text: string | undefined): ShownStatus | undefined {
  if (text === undefined) return undefined;
  const statuses: string[] = [...Object.values(RunStatus), CRASHED];
  if (statuses.includes(text)) return text as ShownStatus;
  throw new UsageError(
    `--status must be one of ${statuses.join(', ')}, got '${text}'.${didYouMean(text, statuses)}`,
    'INVALID_OPTION',
  );
}

function parseLimit(text: string): number {
  const limit = Number(text);
  if (!Number.isInteger(limit) || limit <= 0)
    throw new UsageError(`--limit must be a positive integer, got '${text}'`, 'INVALID_OPTION');
  return limit;
}

/** What a waiting run waits for, and for whom: `approval of gate (alice, bob) since 10:00, times out 14:00`. */
export function waitText(wait: WaitRecord): string {
  const who = wait.approvers ? ` by ${wait.approvers.join(' or ')}` : '';
  const timeout = wait.timeoutAt ? `, times out ${formatTime(wait.timeoutAt)} (then ${wait.onTimeout ?? 'fail'})` : '';
  return `${describeWait(wait)}${who} since ${formatTime(wait.since)}${timeout}`;
}

function printRunList(io: CliIo, runs: ShownRun[], wide: boolean): void {
  if (runs.length === 0) {
    io.stdout.write('No runs found.\n');
    return;
  }
  const nowMs = Date.now();
  const paint = painter(io);
  const anyWaiting = runs.some((run) => run.wait !== undefined);
  const rows = runs.map((run) => {
    const durationMs = runDurationMs(run);
    const row = [
      run.id,
      run.playbook,
      statusText(run, nowMs),
      formatTime(run.startedAt),
      durationMs === undefined ? '' : formatDuration(durationMs),
      `${run.trigger.kind}${run.trigger.scheduleId === undefined ? '' : ` (${run.trigger.scheduleId})`}${run.dryRun ? ' (dry run)' : ''}`,
      run.resumes === 0 ? '' : String(run.resumes),
    ];
    const waits = anyWaiting ? [run.wait ? waitText(run.wait) : ''] : [];
    return wide
      ? [...row, ...waits, formatTime(run.endedAt), run.error ? errorText(run.error) : '']
      : [...row, ...waits];
  });
  const header = [
    'RUN',
    'PLAYBOOK',
    'STATUS',
    'STARTED',
    'DURATION',
    'TRIGGER',
    'RESUMES',
    ...(anyWaiting ? ['WAITING FOR'] : []),
    ...(wide ? ['ENDED', 'ERROR'] : []),
  ];
  const lines = table(header, rows).split('\n');
  // Coloured after padding, so the escape codes do not widen the column.
  const statusAt = (lines[0] ?? '').indexOf('STATUS');
  const statusWidth = Math.max(6, ...rows.map((row) => (row[2] ?? '').length));
  io.stdout.write(
    lines
      .map((line, index) => {
        const colour = index === 0 ? undefined : statusColour(rows[index - 1]?.[2] ?? '');
        return colour === undefined
          ? line
          : `${line.slice(0, statusAt)}${paint(colour, line.slice(statusAt, statusAt + statusWidth))}${line.slice(statusAt + statusWidth)}`;
      })
      .join('\n'),
  );
  const crashed = runs.filter((run) => run.status === CRASHED);
  if (crashed.length > 0)
    io.stdout.write(
      `\n${crashed.map((run) => `Run ${run.id} crashed (no process drives it any more): fleetbook resume ${run.id}`).join('\n')}\n`,
    );
}

function errorText(error: NonNullable<StepNode['error']>): string {
  const facts = [
    error.httpStatus === undefined ? '' : `HTTP ${error.httpStatus}`,
    error.code ?? '',
    error.operationId ?? '',
  ].filter(Boolean);
  return `${error.message}${facts.length === 0 ? '' : ` (${facts.join(', ')})`}`;
}

function printRun(io: CliIo, run: ShownRun, tree: StepNode[], log: readonly LoggedLine[], allItems: boolean): void {
  const durationMs = runDurationMs(run);
  const facts = [
    `started ${formatTime(run.startedAt)}`,
    run.endedAt === undefined ? '' : `ended ${formatTime(run.endedAt)}`,
    durationMs === undefined ? '' : `took ${formatDuration(durationMs)}`,
    `trigger ${run.trigger.kind}${run.trigger.scheduleId === undefined ? '' : ` (${run.trigger.scheduleId})`}`,
    run.dryRun ? 'dry run' : '',
    run.resumes === 0 ? '' : `resumed ${run.resumes}×`,
  ].filter(Boolean);
  const status = statusText(run, Date.now());
  const colour = statusColour(status);
  io.stdout.write(
    `Run ${run.id}  ${run.playbook}  ${colour === undefined ? status : painter(io)(colour, status)}\n${facts.join('  ')}\n`,
  );
  const inputs = Object.entries(run.inputs).map(([name, value]) => `${name}=${JSON.stringify(value)}`);
  if (inputs.length > 0) io.stdout.write(`inputs: ${inputs.join(' ')}\n`);
  if (run.trigger.rerunOf !== undefined)
    io.stdout.write(
      `${run.trigger.retriedFailed ? 'retries what failed in' : 'runs again'} run ${run.trigger.rerunOf}${run.trigger.by === undefined ? '' : ` (by ${run.trigger.by})`}\n`,
    );
  if (run.error) io.stdout.write(`error: ${errorText(run.error)}\n`);
  if (run.wait)
    io.stdout.write(
      `waiting for: ${waitText(run.wait)}\n${howToEndWait(run.id, run.wait, run.trigger.by).replace(/^fleetbook: .*\n/, '')}`,
    );
  if (run.cancelRequested)
    io.stdout.write(`cancel asked by ${run.cancelRequested.by} at ${formatTime(run.cancelRequested.at)}\n`);
  if (run.status === CRASHED)
    io.stdout.write(
      `crashed: no process drives it any more (its lease lapsed or its process is gone); continue it with: fleetbook resume ${run.id}\n`,
    );
  if (run.outputs !== undefined) io.stdout.write(`outputs:\n${formatOutputs(run.outputs)}`);
  const logLines = formatLogLines(log);
  if (logLines !== '') io.stdout.write(`log:\n${logLines.replace(/^/gm, '  ')}`);
  io.stdout.write('\n');
  if (tree.length === 0) {
    io.stdout.write('No steps journaled.\n');
    return;
  }
  io.stdout.write(formatStepTable(tree, { allItems, runId: run.id, errorText, formatDuration }));
}

/** Recent runs, newest first, filtered by the options of `fleetbook runs list`. */
export async function listRunsAction(
  io: CliIo,
  options: { playbook?: string; status?: string; since?: string; limit: string } & OutputOptions,
): Promise<void> {
  const format = outputFormat(options);
  const filter = {
    limit: parseLimit(options.limit),
    ...(options.playbook === undefined ? {} : { playbook: options.playbook }),
    ...(options.since === undefined ? {} : { since: parseInstant('since', options.since, new Date()) }),
  };
  const status = parseStatus(options.status);
  const found = await withRunSource(io.env, async (store) => {
    // A crashed run reads `interrupted` (lease lapsed) or `running` (its process verifiably gone, its lease not yet lapsed).
    const stored =
      status === CRASHED
        ? [
            ...(await store.listRuns({ ...filter, status: RunStatus.interrupted })),
            ...(await store.listRuns({ ...filter, status: RunStatus.running })),
          ].sort((a, b) => (a.startedAt < b.startedAt ? 1 : a.startedAt > b.startedAt ? -1 : 0))
        : await store.listRuns(status === undefined ? filter : { ...filter, status });
    const shown = await Promise.all(stored.map((run) => shownRun(store, run)));
    return status === undefined ? shown : shown.filter((run) => run.status === status).slice(0, filter.limit);
  });
  if (isMachineFormat(format)) {
    for (const run of found) writeMachine(io, format, { ...run, durationMs: runDurationMs(run) });
    return;
  }
  printRunList(io, found, format === 'wide');
}

/**
 * The run's journal folded with the steps' values (`runs show -o json`). Read in pages and
 * folded as read (once: `store.steps()` would read it a second time), so a fleet's journal is
 * never held whole.
 */
async function foldWithValues(store: RunSource, runId: string): Promise<Pick<JournalView, 'records' | 'log'>> {
  const fold = createJournalFold();
  const log = logLineCollector();
  for await (const page of journalPages(store, runId))
    for (const entry of page) {
      fold.add(entry);
      log.add(entry);
    }
  return { records: fold.records(), log: log.lines };
}

/**
 * The run's journal folded without values (the text view prints no step inputs or outputs, so
 * the store leaves them out): from the view the store kept of it (a finished fleet's run), only
 * the entries after that view are read.
 */
async function foldWithoutValues(store: RunSource, runId: string): Promise<JournalView> {
  const kept = store.journalView === undefined ? undefined : await store.journalView(runId);
  return foldJournalView(store, runId, kept);
}

/** Step records whose values `runs show -o json` reads back from the journal in one read (two entries each at most). */
const VALUE_BATCH_RECORDS = 1000;

/** Whether a fold without values noted where every step's values are (a view an older Fleetbook kept did not). */
function valuesNoted(records: readonly StepRecord[]): boolean {
  return records.every((record) => record.kind === itemKind || record.startedSeq !== undefined);
}

/**
 * The run's journal folded without values, each step noting the seqs of its values, for
 * `-o json` to read them back: from the view the store kept when it notes them, else from the
 * journal. Undefined when the source cannot read by seq (a server) or a step's values are not
 * at one seq each (it ended twice without starting again: a journal written by hand or damaged).
 */
async function foldNotingValues(store: RunSource, runId: string): Promise<JournalView | undefined> {
  if (store.journalAt === undefined) return undefined;
  const kept = store.journalView === undefined ? undefined : await store.journalView(runId);
  const folded = await foldJournalView(
    store,
    runId,
    kept !== undefined && valuesNoted(kept.records) ? kept : undefined,
  );
  return valuesNoted(folded.records) ? folded : undefined;
}

/** The nodes of `tree` whose values are read back, in the order the JSON has them. */
function nodesWithValues(tree: readonly StepNode[], into: StepNode[] = []): StepNode[] {
  for (const node of tree) {
    if (node.startedSeq !== undefined || node.finishedSeq !== undefined) into.push(node);
    nodesWithValues(node.children, into);
  }
  return into;
}

/**
 * `node` as the fold with values makes it: its input where it notes `startedSeq`, its outputs
 * where it notes `finishedSeq` (each left out when the entry has none), the members in the same
 * order.
 */
function withValues(node: StepNode, events: ReadonlyMap<number, JournalEvent>): StepNode {
  const shown: Record<string, unknown> = {};
  for (const [key, member] of Object.entries(node)) {
    if (key !== 'startedSeq' && key !== 'finishedSeq') {
      shown[key] = member;
      continue;
    }
    const event = events.get(member as number);
    if (key === 'startedSeq') {
      const input = event?.type === 'step.started' || event?.type === 'step.finished' ? event.input : undefined;
      if (input !== undefined) shown.input = input;
    } else {
      const outputs = event?.type === 'step.finished' ? event.outputs : undefined;
      if (outputs !== undefined) shown.outputs = outputs;
    }
  }
  return shown as unknown as StepNode;
}

/**
 * `runs show -o json`: the steps folded without values, their inputs and outputs read back from
 * the journal by seq a batch at a time while the JSON is written, so a fleet's values are never
 * held at once. A source that cannot read by seq folds the journal with its values, as before.
 */
async function writeRunJson(io: CliIo, store: RunSource, runId: string): Promise<void> {
  const found = await findRun(store, runId, io.env);
  const noted = await foldNotingValues(store, found.id);
  const { records, log } = noted ?? (await foldWithValues(store, found.id));
  const run = await shownRun(store, found);
  const tree = buildStepTree(records);
  const shown = { run: { ...run, durationMs: runDurationMs(run) }, steps: tree, log };
  // A large run's JSON is written as it is made, never as one string (see json-stream.ts).
  if (noted === undefined) return writeJsonStreamed(io.stdout, shown);
  await writeJsonStreamed(io.stdout, shown, '\n', {
    objects: nodesWithValues(tree),
    batchSize: VALUE_BATCH_RECORDS,
    async read(nodes) {
      const seqs = nodes.flatMap((node) => [node.startedSeq ?? [], node.finishedSeq ?? []].flat());
      const entries = (await store.journalAt?.(found.id, seqs)) ?? [];
      const events = new Map(entries.map((entry) => [entry.seq, entry.event]));
      return nodes.map((node) => withValues(node, events));
    },
  });
}

/** One run with its step tree; a large loop's items summarised in the text view unless `--items`. */
export async function showRunAction(
  io: CliIo,
  runId: string,
  options: { items?: boolean } & OutputOptions,
): Promise<void> {
  const format = outputFormat(options);
  if (format === 'json') return withRunSource(io.env, (store) => writeRunJson(io, store, runId));
  const machine = isMachineFormat(format);
  const { run, tree, log } = await withRunSource(io.env, async (store) => {
    const found = await findRun(store, runId, io.env);
    const { records, log } = machine ? await foldWithValues(store, found.id) : await foldWithoutValues(store, found.id);
    // The text view builds its tree of the steps it prints: not those of a large loop's items it leaves out.
    const shown = machine || options.items === true ? records : recordsShown(records);
    return { run: await shownRun(store, found), tree: buildStepTree(shown), log };
  });
  if (machine) {
    writeMachine(io, format, { run: { ...run, durationMs: runDurationMs(run) }, steps: tree, log });
    return;
  }
  printRun(io, run, tree, log, options.items === true);
}

/** How often `runs logs --follow` reads the journal again: it is written by another process. */
const FOLLOW_POLL_MS = 500;

/**
 * A run's log from its journal: every step's doings and its `log:` lines, or only those inside
 * `--step`. With `--follow`, new entries as they are journaled, until the run ends (or is
 * found crashed).
 */
export async function runLogsAction(
  io: CliIo,
  runId: string,
  options: { follow?: boolean; step?: string } & OutputOptions,
): Promise<void> {
  const format: OutputFormat = outputFormat(options);
  await withRunSource(io.env, async (store) => {
    const run = await findRun(store, runId, io.env);
    const logPaths = new Set<string>();
    let printed = 0;
    for (;;) {
      // Only what is new: journal seqs count from 1 without gaps.
      const fresh = await store.journal(run.id, printed);
      printed += fresh.length;
      for (const path of logStepPaths(fresh)) logPaths.add(path);
      if (isMachineFormat(format)) {
        for (const entry of fresh)
          if (options.step === undefined || isWithin(entry.event.path, options.step)) writeMachine(io, format, entry);
      } else {
        io.stdout.write(formatRunLog(fresh, logPaths, options.step));
      }
      if (!options.follow) return;
      const now = await shownRun(store, (await store.getRun(run.id)) ?? run);
      if (now.status !== RunStatus.running) {
        // What was journaled between the read above and the run's end.
        if ((await store.journal(run.id, printed)).length > 0) continue;
        if (!isMachineFormat(format)) io.stdout.write(`Run ${run.id} ${now.status}.\n`);
        return;
      }
      await delay(FOLLOW_POLL_MS);
    }
  });
}

/** Forgets the runs that ended before the cutoff, and their output files. */
export async function pruneRunsAction(io: CliIo, options: { olderThan?: string } & OutputOptions): Promise<void> {
  const format = outputFormat(options);
  const age = options.olderThan ?? io.env.FLEETBOOK_RETENTION;
  if (age === undefined || age === '') {
    throw new UsageError(
      'say how old a run must be to go: --older-than 30d (or set FLEETBOOK_RETENTION)',
      'MISSING_OPTION',
    );
  }
  const before = parseInstant('older-than', age, new Date());
  const home = resolveFleetbookHome({ env: io.env });
  const pruned = await withRunStore({ env: io.env }, (store) =>
    pruneRuns(store, before, [outputsDirOf(home), worldsDirOf(home)]),
  );
  if (isMachineFormat(format)) writeMachine(io, format, { pruned, endedBefore: before });
  else io.stdout.write(`Pruned ${pruned} run${pruned === 1 ? '' : 's'} that ended before ${formatTime(before)}.\n`);
}

/**
 * `runs cancel`: a run no process drives ends `cancelled` at once; a running one is asked to
 * stop (its driver sees the request at its next heartbeat); an ended one is refused (exit 2).
 */
export async function cancelRunAction(io: CliIo, runId: string, options: OutputOptions): Promise<void> {
  const format = outputFormat(options);
  const server = serverSettings(io.env);
  const { run, outcome } = server
    ? await (async () => {
        // Against a server: the cancellation is recorded there, by the token's name.
        const found = await findRun(remoteRunSource(server), runId, io.env);
        const answer = await postToServer<{ outcome: 'cancelled' | 'requested' | 'ended'; run: RunRecord }>(
          server,
          `/api/v1/runs/${encodeURIComponent(found.id)}/cancel`,
          undefined,
        );
        const cancelOutcome =
          answer.outcome === 'ended'
            ? { outcome: 'ended' as const, status: answer.run.status }
            : { outcome: answer.outcome };
        return { run: found, outcome: cancelOutcome };
      })()
    : await withRunStore({ env: io.env }, async (store) => {
        const found = await findRun(store, runId, io.env);
        return { run: found, outcome: await store.cancelRun(found.id, userInfo().username) };
      });
  if (outcome.outcome === 'ended')
    throw new UsageError(`run ${run.id} already ended ${outcome.status}; there is nothing to cancel`, 'RUN_ENDED');
  if (isMachineFormat(format)) {
    writeMachine(io, format, { runId: run.id, outcome: outcome.outcome });
    return;
  }
  io.stdout.write(
    outcome.outcome === 'cancelled'
      ? `run ${run.id} cancelled (it was ${run.status})\n`
      : `run ${run.id} is running: asked to stop; its driver stops it at a journaled point within seconds and ends it cancelled (fleetbook runs show ${run.id})\n`,
  );
}
