/**
 * What a leaf step executor works with. Executors receive rendered values (no templates):
 * the engine renders, journals the step, applies `if`, retries, timeouts, rescue and
 * always; an executor performs one attempt.
 */
import type { PlatformClient } from '../../api/index.js';
import type { Logger, SecretRegistry } from '../../logging/index.js';
import type {
  AppendOptions,
  ApprovalDecision,
  JournalEvent,
  RunStore,
  StepPath,
  WaitRecord,
} from '../../store/index.js';
import type { Clock } from '../../timers/index.js';
import type { PlanGuard } from '../plan/plan-guard.js';
import type { PlanSession } from '../plan/plan-write.js';

export interface StepRuntime {
  client: PlatformClient;
  /** Aborts on run cancellation and on the step's timeout. */
  signal: AbortSignal;
  /** Carries `runId`, `playbook`, `stepId`, `attempt`. */
  logger: Logger;
  /**
   * Writes one line about this attempt, with the fields `logger` would carry, without making a
   * logger for it: what a step that lives long (a wait) logs with, so it holds no logger of its own.
   */
  log(level: 'debug' | 'info' | 'warn', fields: Record<string, unknown>, message: string): void;
  secrets: SecretRegistry;
  dryRun: boolean;
  /**
   * A dry run that plans (`fleetbook plan`): each write not sent is planned instead, its
   * resource read as it is and the change it would make recorded in the step's outputs.
   */
  planWrites?: PlanSession;
  /** `fleetbook apply`: checks each write against the plan just before it is sent (throws to stop it). */
  planGuard?: PlanGuard;
  /** The step's place in the run, e.g. `systems[3].update`. */
  path: StepPath;
  /** Attempt of the step, from 1. */
  attempt: number;
  /** The run's time: durations, poll intervals, sleeps. */
  clock: Clock;
  /**
   * Appends to the run's journal; resolves once durable, or once kept in order for the next
   * commit when `buffered` (only for an entry no effect outside the run waits on: see
   * `RunStore.append`). Called before acting on the transition.
   */
  journal(event: JournalEvent, options?: Pick<AppendOptions, 'buffered'>): Promise<void>;
  /** Decisions recorded for the run and the way to stop it to wait for one (approval gates). */
  waits: RunWaits;
  /** What an `email` step sends with: the run's mailer and folders. */
  mail: RunMail;
  /** The runs of the store this run is recorded in, for a `runs` step (read only). */
  history: RunHistory;
}

/** What a `runs` step reads: the run store's history query, nothing that writes. */
export type RunHistory = Pick<RunStore, 'listRuns'>;

/** An e-mail as an `email` step hands it to the mailer (the sender is the channel's). */
export interface MailToSend {
  to: string[];
  cc: string[];
  bcc: string[];
  subject: string;
  text: string;
  html: string;
  messageId: string;
  headers: Record<string, string>;
  attachments: Array<{ filename: string; content: Buffer; contentType: string }>;
}

/** What the SMTP server (or the rehearsal's outbox) said when it took a message. */
export interface MailReceipt {
  accepted: string[];
  rejected: string[];
  response: string;
}

/**
 * Where the `email` steps of a run send: the e-mail channels of fleetbook.yaml (the
 * notifications' SMTP code, with their retry policy), or a rehearsal's outbox. Given by the
 * process that runs the run; the engine only passes it on.
 */
export interface Mailer {
  /** The e-mail channels a step may name in `via:`. */
  channels: readonly string[];
  /** What messages go to instead of a channel (`the simulator's outbox`); unset when they are sent. */
  rehearsal?: string;
  /** `server.url` of fleetbook.yaml: where a run's page is, for a link instead of a too-large attachment. */
  serverUrl?: string;
  /** The Message-ID of the message with `key` sent through `channel`: the same for every send. */
  messageId(channel: string, key: string): string;
  /**
   * Sends, retrying a failure the server calls temporary as the channel's policy says (on
   * `clock`); throws an error with `responseCode` and `response` (the server's words) otherwise.
   */
  send(
    channel: string,
    mail: MailToSend,
    options: { clock: Clock; signal: AbortSignal; onRetry?(attempt: number, delayMs: number, reason: string): void },
  ): Promise<MailReceipt>;
}

export interface RunMail {
  /** None: the process configured no e-mail channel (an `email` step fails saying so). */
  mailer: Mailer | undefined;
  runId: string;
  /** The run's own outputs folder (`<outputsDir>/<runId>`): attachments may come from it. */
  outputsDir: string;
}

/** What a wait asks for: the `WaitRecord` less what the engine fills in (path, since). */
export type WaitRequest = Omit<WaitRecord, 'path' | 'since' | 'timeoutAt'> & {
  /** How long until the wait's timeout applies (`timeoutAt`). */
  timeoutMs?: number;
};

/**
 * The run's waits: a step that needs something from outside the run (a person's approval)
 * reads the decision journaled for its path, or stops the run to wait for one.
 */
export interface RunWaits {
  /** The last decision journaled for the gate at `path` (`fleetbook approve`/`deny`, a timeout). */
  decisionOf(path: StepPath): ApprovalDecision | undefined;
  /**
   * Journals `run.waiting` for the step at `path` and stops the run: nothing new starts, the
   * steps in flight stop at a journaled point, and the run ends `waiting` (resumed when the
   * wait ends, this step running again then). Rejects with the error the attempt ends with.
   */
  waitFor(path: StepPath, request: WaitRequest): Promise<never>;
}

/** What one attempt of a leaf step produced. */
export interface LeafResult {
  outputs: unknown;
  /** The attempt changed nothing outside the run (a read): its end need not be committed at once. */
  readOnly?: boolean;
  /** `simulated`: a write a dry run did not send; `skipped`: the step decided not to act. @default 'succeeded' */
  status?: 'succeeded' | 'simulated' | 'skipped';
}
