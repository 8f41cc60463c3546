/**
 * The contract between the simulator's core (server, auth, limits, faults, clock, async
 * operations) and its areas (private cloud, devices, ...). An area is plain data plus
 * handlers keyed by OpenAPI operation id; it never sees the HTTP framework.
 */
import type { Readable } from 'node:stream';

/** A seeded pseudo-random source; the same seed gives the same sequence. */
export interface Rng {
  /** Uniform in [0, 1). */
  next(): number;
  int(minInclusive: number, maxInclusive: number): number;
  pick<T>(items: readonly T[]): T;
  uuid(): string;
  /** A child generator whose sequence depends only on the parent seed and `label`. */
  fork(label: string): Rng;
}

/**
 * Simulated time. `now()` advances `timeScale` times faster than real time, plus any
 * offset set through `/_sim/clock`. Durations in the world are simulated milliseconds.
 */
export interface SimClock {
  now(): number;
  nowIso(): string;
  readonly timeScale: number;
  /**
   * Real time plus whatever `advance` added, unscaled: for what a client measures by its own
   * clock (token lifetimes), so a time scale does not expire tokens in seconds.
   */
  wallNow(): number;
  /** Moves simulated time forward (control surface and tests). */
  advance(ms: number): void;
}

export type AsyncFlavour = 'dataServices' | 'devices' | 'subscriptions' | 'reporting';
export type AsyncTerminal = 'SUCCEEDED' | 'FAILED' | 'TIMEDOUT' | 'CANCELLED';

/** What an area asks for when it accepts a long-running write (a 202). */
export interface AsyncOperationSpec {
  flavour: AsyncFlavour;
  /** Operation type label, e.g. `software-update`. */
  type: string;
  /** Id of the resource it acts on (system id, report id...). */
  resourceId?: string;
  /** Path of that resource (data-services records list it in `associatedResources`). */
  resourceUri?: string;
  /** Simulated duration until the operation ends. */
  durationMs: number;
  /**
   * Simulated minutes after which the platform gives up: an operation longer than this ends
   * TIMEDOUT at it. @default twice the duration, at least 60 (never reached)
   */
  timeoutMinutes?: number;
  /**
   * Called once, in simulated-time order, when the operation's end time has passed; it
   * applies the side effects to the world and returns how the operation ended. When fault
   * injection forces a failure, `injectedFailure` is set: the area should leave the world
   * as a failed operation would (the record ends FAILED with this error whatever it returns).
   */
  complete(injectedFailure?: InjectedFailure): AsyncOutcome;
}

/** A failure forced on an async operation by fault injection (`asyncOperations` rules). */
export interface InjectedFailure {
  errorCode: string;
  message: string;
}

export interface AsyncOutcome {
  status: AsyncTerminal;
  result?: unknown;
  resultType?: string;
  error?: { errorCode: string; message: string };
  /** Reporting: `results[]` entries `{name, resourceUri}`. */
  results?: Array<{ name: string; resourceUri: string }>;
}

export interface AsyncOperationRecord {
  id: string;
  flavour: AsyncFlavour;
  type: string;
  resourceId?: string;
  resourceUri?: string;
  startedAt: number;
  endsAt: number;
  endedAt?: number;
  timeoutMinutes: number;
  outcome?: AsyncOutcome;
  /** Set by fault injection: the operation never reaches a terminal state. */
  stuck?: boolean;
}

export interface AsyncOperations {
  /** Registers the operation and returns its record; the Location path is `locationOf(record)`. */
  start(spec: AsyncOperationSpec): AsyncOperationRecord;
  get(id: string): AsyncOperationRecord | undefined;
  /** Every operation of a flavour, in start order (the data-services list). */
  list(flavour: AsyncFlavour): AsyncOperationRecord[];
  locationOf(record: AsyncOperationRecord): string;
  /** Runs `complete()` of every operation whose end time has passed, in end-time order. */
  settle(): void;
  /** Operations still running whose resourceId matches (409 checks). */
  running(resourceId: string): AsyncOperationRecord[];
}

/** An e-mail the platform would have sent (report exports, invitations). */
export interface OutboxMessage {
  id: string;
  to: string[];
  subject: string;
  body: string;
  /** Links in the mail, e.g. the report download URL. */
  links: string[];
  sentAt: string;
  kind: string;
  /** A playbook's `email` step rehearsed against the simulator: the rest of the message. */
  cc?: string[];
  bcc?: string[];
  html?: string;
  messageId?: string;
  attachments?: Array<{ filename: string; bytes: number }>;
}

export interface SimRequest {
  operationId: string;
  method: string;
  /** Path parameters by name. */
  params: Record<string, string>;
  /** Query parameters; repeated keys (`id=a&id=b`) become arrays. */
  query: Record<string, string | string[]>;
  body: unknown;
  headers: Record<string, string | undefined>;
  /**
   * Region of a regional area, from the path prefix or header; `''` when the request named
   * no region (region-agnostic: lists show every region's resources, any id resolves).
   */
  region: string;
  /** The authenticated API client. */
  clientId: string;
  /** Its role (a workspace API credential it creates gets the same). */
  clientRole?: 'Administrator' | 'Operator' | 'Observer';
  /** The origin of this simulator, for absolute URLs (download links). */
  origin: string;
  /** `limit` range and default of a list operation (from the description's `x-fleetbook-paging`). */
  paging?: { default: number; min: number; max: number; envelope: boolean };
}

export interface SimResponse {
  status: number;
  headers?: Record<string, string>;
  /** JSON body; omitted for empty responses. */
  body?: unknown;
  /**
   * The JSON body already serialized, instead of `body` (views reused from a cache, so a
   * page of large records is not stringified on every read): sent as it is. A Buffer (UTF-8)
   * is written without being measured or encoded again: a page kept whole.
   */
  json?: string | Buffer;
  /** Streamed body (CSV downloads); `headers` must then carry the content type. */
  stream?: Readable;
}

export type OperationHandler = (req: SimRequest) => SimResponse | Promise<SimResponse>;

/** A route of an area that is not a platform operation (see `AreaModule.extraRoutes`). */
export interface ExtraRoute {
  /** Label for the request log, e.g. `_sim.downloadReport`. */
  name: string;
  /** GET for what a client reads (a signed download); PUT for a change made by hand (a system's health). */
  method: 'GET' | 'PUT';
  /** Path with `:param` placeholders, e.g. `/_sim/downloads/:id`; parameters land in `req.params`. */
  path: string;
  handler: OperationHandler;
}

/** Shared services every area receives. */
export interface SimContext {
  clock: SimClock;
  asyncOps: AsyncOperations;
  outbox: OutboxMessage[];
  /** Appends to the outbox with id and timestamp filled in. */
  sendMail(message: Omit<OutboxMessage, 'id' | 'sentAt'>): OutboxMessage;
  rng: Rng;
  /** World-file settings of this area (sizes, pinned failures), already parsed. */
  config: Record<string, unknown>;
  /** The state of another area (devices read subscriptions, for example). */
  stateOf<S>(areaKey: string): S;
}

/**
 * One area of the platform. `createState` builds the seeded world part from `ctx.rng` and
 * `ctx.config` only (not the clock), so the same seed gives the same world; `handlers`
 * serves its operations. Handlers throw `SimHttpError` (see errors.ts) for platform errors.
 */
export interface AreaModule<State = unknown> {
  key: string;
  /** JSON Schema of this area's world-file section (`ctx.config`); checked before the world is built. */
  configSchema?: object;
  createState(ctx: SimContext): State;
  handlers(state: State, ctx: SimContext): Record<string, OperationHandler>;
  /**
   * Routes outside the platform description, e.g. the signed report-download URLs under
   * `/_sim/downloads/`. Served without bearer auth, input validation or rate limits (the
   * handler checks its own signature); `req.operationId` is the route's `name`.
   */
  extraRoutes?(state: State, ctx: SimContext): ExtraRoute[];
  /** Counts, and the ids a client cannot discover through the API (the workspace id), for `/_sim/world`. */
  summary(state: State): Record<string, number | string>;
  /**
   * API clients this area holds (workspace API credentials): the token endpoint accepts them
   * beside the world file's clients, and a token of one that is gone is refused as revoked.
   */
  apiClientOf?(
    state: State,
    clientId: string,
  ): { clientId: string; clientSecret: string; role: 'Administrator' | 'Operator' | 'Observer' } | undefined;
}
