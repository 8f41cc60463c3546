/** What `fleetbook demo` does (see demo.ts), imported when the command runs. */
import { randomUUID } from 'node:crypto';
import { createWriteStream, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { admit, Door, driveAdmitted, type RunParts } from '../../admission/index.js';
import type { RunResult } from '../../engine/index.js';
import { ExitCode, UsageError } from '../../errors/index.js';
import { hasErrors, loadPlaybook, resolvePlaybookRef, type Playbook } from '../../playbook/index.js';
import type { Simulator } from '../../simulator/index.js';
import { createMemoryRunStore, RunStatus } from '../../store/index.js';
import type { CliIo } from '../io.js';
import { createLiveProgress, wantsLiveProgress } from '../live-progress.js';
import { isMachineFormat, outputFormat, writeMachine, type OutputOptions } from '../output.js';
import { localCaller, withProcessHost } from '../process-host.js';

export interface DemoOptions extends OutputOptions {
  timeScale: string;
  outputDir: string;
}

/** Recipients of the demo's report export. */
const RECIPIENTS = ['ops@example.com', 'finance@example.com'];
/** Recipient of the consumption CSV (its `email` step, rehearsed: it lands in the simulator's outbox). */
const CSV_RECIPIENTS = ['finops@example.com'];
/**
 * Polling of the embedded simulator, which answers in well under a millisecond: frequent
 * polls keep the simulated durations in the summary close to the operations' own.
 */
const DEMO_WAIT = { minPollMs: 50, maxPollMs: 500 } as const;

interface ClusterRow {
  system: string;
  region: string;
  cluster: string;
  before: string;
  after: string;
  status: string;
  attempts: number;
  resumed: boolean;
  durationMinutes?: number;
}

/** One event of the demo: a line of `--json`, a paragraph of the readable output. */
type DemoEvent =
  | { event: 'started'; simulator: string; timeScale: number; outputDir: string }
  | {
      event: 'rollingUpdate';
      status: RunStatus;
      runId: string;
      catalogVersion?: string;
      clusters: ClusterRow[];
      error?: string;
    }
  | {
      event: 'reportExport';
      status: RunStatus;
      runId: string;
      downloadUrl?: string;
      recipients: string[];
      subject?: string;
      error?: string;
    }
  | {
      event: 'consumptionCsv';
      status: RunStatus;
      runId: string;
      report: string;
      file?: string;
      rows?: number;
      bytes?: number;
      error?: string;
    }
  | { event: 'outbox'; messages: OutboxLine[] }
  | { event: 'finished'; status: 'succeeded' | 'failed'; durationMs: number; logFile: string };

/** A message of the simulator's outbox as the demo shows it: who, what, what came with it. */
interface OutboxLine {
  to: string[];
  subject: string;
  attachments: Array<{ filename: string; bytes: number }>;
  links: string[];
}

/** The process's parts (the host's), which every run of the tour shares. */
type DemoContext = RunParts;

function loadBundled(name: string): Playbook {
  const loaded = loadPlaybook(resolvePlaybookRef(name, process.cwd()));
  if (!loaded.playbook || hasErrors(loaded.problems)) {
    throw new Error(
      `the bundled playbook ${name} does not load: ${loaded.problems.map((p) => `${p.file}:${p.line}:${p.column} ${p.message}`).join('; ')}`,
    );
  }
  const playbook = loaded.playbook;
  return { ...playbook, defaults: { ...playbook.defaults, wait: { ...playbook.defaults.wait, ...DEMO_WAIT } } };
}

/** One bundled playbook, asked for as `fleetbook run` asks (the same admission), driven here. */
async function run(context: DemoContext, name: string, inputs: Record<string, unknown>): Promise<RunResult> {
  const playbook = loadBundled(name);
  const request = { playbook, inputs, trigger: { kind: 'manual' }, target: 'here', dryRun: false } as const;
  const admission = await admit(request, localCaller(Door.cliRun), { store: context.store, now: Date.now });
  return driveAdmitted(admission, context, { runId: randomUUID(), signal: new AbortController().signal });
}

const errorOf = (result: RunResult): { error?: string } => (result.error ? { error: result.error.message } : {});

async function rollingUpdate(context: DemoContext): Promise<DemoEvent> {
  const result = await run(context, 'rolling-cluster-update', { maxParallelSystems: 2, clusterByCluster: true });
  const outputs = (result.outputs ?? {}) as { catalogVersion?: string; clusters?: ClusterRow[] };
  return {
    event: 'rollingUpdate',
    status: result.status,
    runId: result.runId,
    ...(outputs.catalogVersion ? { catalogVersion: outputs.catalogVersion } : {}),
    clusters: outputs.clusters ?? [],
    ...errorOf(result),
  };
}

async function reportExport(context: DemoContext, sim: Simulator): Promise<DemoEvent> {
  const subject = 'Fleetbook demo: subscriptions';
  const result = await run(context, 'nightly-report-export', {
    reportType: 'SUBSCRIPTION',
    name: 'demo subscriptions',
    columns: ['SUBSCRIPTION_KEY', 'SUBSCRIPTION_TYPE', 'QUANTITY', 'SUBSCRIPTION_STATUS', 'END_DATE'],
    format: 'CSV',
    recipients: RECIPIENTS,
    subject,
  });
  const downloadUrl = (result.outputs as { downloadUrl?: string } | undefined)?.downloadUrl;
  // Who got it, as the platform's outbox shows it (not as the inputs asked).
  const mail = sim.control.outbox().find((message) => downloadUrl !== undefined && message.links.includes(downloadUrl));
  return {
    event: 'reportExport',
    status: result.status,
    runId: result.runId,
    ...(downloadUrl ? { downloadUrl } : {}),
    recipients: mail ? [...mail.to] : [],
    ...(mail ? { subject: mail.subject } : {}),
    ...errorOf(result),
  };
}

async function consumptionCsv(context: DemoContext): Promise<DemoEvent> {
  const report = 'Monthly cost by product';
  // Into the run's outputs folder (the demo's `outputs/<run id>/`), where its `email` step may attach it.
  const result = await run(context, 'consumption-report-download', {
    reportName: report,
    region: 'us-west',
    recipients: CSV_RECIPIENTS,
  });
  // The rows were counted as the CSV streamed to disk (saveTo's sumColumns): no second read.
  const outputs = (result.outputs ?? {}) as { file?: string; bytes?: number; rows?: number };
  const rows = result.status === RunStatus.succeeded ? outputs.rows : undefined;
  return {
    event: 'consumptionCsv',
    status: result.status,
    runId: result.runId,
    report,
    ...(outputs.file ? { file: outputs.file } : {}),
    ...(rows === undefined ? {} : { rows }),
    ...(outputs.bytes === undefined ? {} : { bytes: outputs.bytes }),
    ...errorOf(result),
  };
}

/** What the runs mailed, as the simulator's outbox holds it (a rehearsal mails no one). */
function outbox(sim: Simulator): DemoEvent {
  const messages = sim.control.outbox().map((message) => ({
    to: [...message.to],
    subject: message.subject,
    attachments: (message.attachments ?? []).map(({ filename, bytes }) => ({ filename, bytes })),
    links: [...message.links],
  }));
  return { event: 'outbox', messages };
}

function describeOutbox(messages: readonly OutboxLine[]): string {
  const lines = messages.flatMap((message) => [
    `   to ${message.to.join(', ')}: "${message.subject}"`,
    ...message.attachments.map((file) => `     attached: ${file.filename} (${file.bytes} bytes)`),
    ...message.links.map((link) => `     link: ${link}`),
  ]);
  return `${lines.length === 0 ? '   (empty)' : lines.join('\n')}\n`;
}

const pad = (text: string, width: number): string => text.padEnd(width);

/** The readable form of an event. */
function describe(event: DemoEvent): string {
  switch (event.event) {
    case 'started':
      return `Fleetbook demo: the embedded simulator at ${event.simulator} (time scale ${event.timeScale}: a 45-minute update takes ${Math.round((45 * 60_000) / event.timeScale / 100) / 10} s)\n\n1. Rolling cluster update of the default world (prechecks, update, resume on failure; 2 systems at a time, cluster by cluster)...\n`;
    case 'rollingUpdate': {
      const lines = [
        `   catalog ${event.catalogVersion ?? '?'}: ${event.status}${event.error ? ` (${event.error})` : ''}`,
      ];
      const systems = [...new Set(event.clusters.map((row) => row.system))];
      for (const system of systems) {
        const rows = event.clusters.filter((row) => row.system === system);
        lines.push(`   ${system} (${rows[0]?.region ?? ''})`);
        for (const row of rows) {
          const detail =
            row.status === 'succeeded'
              ? `${row.attempts} attempt${row.attempts === 1 ? '' : 's'}${row.resumed ? ', resumed after a failure' : ''}${row.durationMinutes === undefined ? '' : `, ${row.durationMinutes} simulated min`}`
              : row.status;
          lines.push(`     ${pad(row.cluster, 11)} ${pad(`${row.before} → ${row.after}`, 16)} ${detail}`);
        }
      }
      return `${lines.join('\n')}\n\n2. Nightly report export (subscriptions, CSV, e-mailed)...\n`;
    }
    case 'reportExport':
      return (
        (event.status === RunStatus.succeeded
          ? `   ready: ${event.downloadUrl ?? ''}\n   (served by the demo's own simulator: the link stops working when the demo ends)\n   the outbox shows "${event.subject ?? ''}" sent to ${event.recipients.join(', ')}\n`
          : `   ${event.status}: ${event.error ?? ''}\n`) +
        '\n3. Consumption report download (CSV streamed to disk, then mailed)...\n'
      );
    case 'consumptionCsv':
      return (
        (event.status === RunStatus.succeeded
          ? `   "${event.report}": ${event.rows ?? 0} rows (${event.bytes ?? 0} bytes) in ${event.file ?? ''}\n`
          : `   ${event.status}: ${event.error ?? ''}\n`) +
        "\n4. The simulator's outbox: the mail of these runs (a rehearsal mails no one)\n"
      );
    case 'outbox':
      return describeOutbox(event.messages);
    case 'finished':
      return `\nDemo ${event.status} in ${Math.round(event.durationMs / 100) / 10} s. Every step's log: ${event.logFile}\n`;
  }
}

/** The tour: simulator, three playbooks, what happened (exit 1 when a run did not succeed). */
export async function demoAction(io: CliIo, options: DemoOptions): Promise<void> {
  const timeScale = Number(options.timeScale);
  if (!(timeScale > 0))
    throw new UsageError(`--time-scale must be a positive number, got '${options.timeScale}'.`, 'INVALID_OPTION');
  const outputDir = resolve(options.outputDir);
  mkdirSync(outputDir, { recursive: true });
  const logFile = resolve(outputDir, 'demo.log');
  const format = outputFormat(options);
  // The rolling update takes most of the demo: on a terminal its loops and operations show as they go.
  const live = wantsLiveProgress(io, !isMachineFormat(format)) ? createLiveProgress(io.stdout) : undefined;
  const emit = (event: DemoEvent): void => {
    if (isMachineFormat(format)) writeMachine(io, format, event);
    else if (live && event.event !== 'finished') live.write(describe(event));
    else {
      live?.close();
      io.stdout.write(describe(event));
    }
  };

  const startedMs = Date.now();
  const logStream = createWriteStream(logFile, { flags: 'w' });
  try {
    // The tour's runs go to a store of its own: the operator's history keeps only their own runs.
    const store = createMemoryRunStore();
    const hostOptions = { logLevel: 'info', screen: logStream, readable: false, store };
    await withProcessHost(
      io,
      live ? { ...hostOptions, instrument: () => ({ store: live.observe(store) }) } : hostOptions,
      async (host) => {
        const connection = await host.connect({ target: 'simulator', timeScale, region: 'us-west' });
        const sim = connection.simulator as Simulator;
        // The tour's files (large values, the consumption CSV) stay in its own folder, beside its log.
        const context = { ...host.runParts(connection), outputsDir: join(outputDir, 'outputs') };
        emit({ event: 'started', simulator: sim.url, timeScale, outputDir });
        const events: DemoEvent[] = [];
        for (const step of [
          () => rollingUpdate(context),
          () => reportExport(context, sim),
          () => consumptionCsv(context),
          () => Promise.resolve(outbox(sim)),
        ]) {
          const event = await step();
          events.push(event);
          emit(event);
        }
        const failed = events.some((event) => 'status' in event && event.status !== RunStatus.succeeded);
        emit({
          event: 'finished',
          status: failed ? 'failed' : 'succeeded',
          durationMs: Date.now() - startedMs,
          logFile,
        });
        if (failed) io.exitCode = ExitCode.runFailed;
      },
    );
  } finally {
    live?.close();
    await new Promise((done) => logStream.end(done));
  }
}
