/**
 * A running `fleetbook server`: the store observed (so this process's appends reach the event
 * streams and the metrics at once), the journal hub, the run launcher, the app listening. The
 * CLI adds the scheduler and the worker around it and stops them in order.
 */
import type { PlatformClient } from '../api/index.js';
import type { RunParts } from '../admission/index.js';
import type { Logger, SecretRegistry } from '../logging/index.js';
import { outputsRootOf, runEnvironmentOf, type RunEnvironment } from '../engine/index.js';
import type { LoadPlaybookOptions } from '../playbook/index.js';
import type { RunStore } from '../store/index.js';
import type { FastifyInstance } from 'fastify';
import { dirname, resolve } from 'node:path';
import { createServerApp } from './app.js';
import { createJournalHub, type JournalHub } from './journal-hub.js';
import { createServerMetrics, type ServerMetrics } from './metrics.js';
import { observeStore } from './observed-store.js';
import { createPlaybookCatalog } from './playbook-catalog.js';
import { createRunLauncher, type RunLauncher } from './run-launcher.js';
import { systemClock, type Clock } from '../timers/index.js';
import { startWaitSweep } from './wait-sweep.js';
import type { OidcSettings } from './oidc-config.js';

export interface ServerOptions extends RunEnvironment {
  store: RunStore;
  client: PlatformClient;
  logger: Logger;
  secrets: SecretRegistry;
  playbooksDir: string;
  loadOptions?: LoadPlaybookOptions;
  env: Record<string, string | undefined>;
  host: string;
  /** 0 picks a free port. */
  port: number;
  /** How often a followed journal is read when no append of this process said it changed. @default 100 */
  pollMs?: number;
  metrics?: ServerMetrics;
  /** The notifications of the runs this server drives (the process host's notifier). @default none is sent */
  notifications?: RunParts['notifications'];
  /**
   * How long a close lets the requests in flight finish before dropping every connection: one
   * answered after the close began is kept alive (for 72 s), and a client may stop halfway
   * through sending. @default 5_000
   */
  closeGraceMs?: number;
  /** The time of approval decisions and of the sweep of due waits (the runs keep their own). @default systemClock */
  clock?: Clock;
  /** The web UI's cookies are `Secure` over plain HTTP too: the server is behind a TLS proxy (`server.secureCookies`). */
  secureCookies?: boolean;
  /** How often waits whose time came are ended and their runs continued (`wait-sweep.ts`). @default 15_000 */
  waitSweepMs?: number;
  /** The web UI's single sign-on (`server.oidc` of fleetbook.yaml). @default token login only */
  oidc?: OidcSettings;
}

export interface RunningServer {
  url: string;
  app: FastifyInstance;
  /** The store this process's runs and worker must write through (observed). */
  store: RunStore;
  hub: JournalHub;
  launcher: RunLauncher;
  metrics: ServerMetrics;
  /** Stops answering, ends the event streams, stops the runs driven here (interrupted, resumable). */
  close(): Promise<void>;
}

export async function startServer(options: ServerOptions): Promise<RunningServer> {
  const metrics = options.metrics ?? createServerMetrics(options.store);
  const hub = createJournalHub(options.store, { pollMs: options.pollMs ?? 100 });
  const store = observeStore(options.store, {
    appended(runId, event, at) {
      metrics.journaled(runId, event, at);
      hub.notify(runId);
    },
    created: (runId) => hub.notify(runId),
    statusChanged: (runId) => hub.notify(runId),
  });
  const catalog = createPlaybookCatalog(options.playbooksDir, options.loadOptions, options.logger);
  const launcher = createRunLauncher({
    store,
    client: options.client,
    logger: options.logger,
    secrets: options.secrets,
    env: options.env,
    ...(options.notifications ? { notifications: options.notifications } : {}),
    ...(options.clock ? { decisionClock: options.clock } : {}),
    ...runEnvironmentOf(options),
  });
  const app = await createServerApp({
    store,
    catalog,
    launcher,
    hub,
    metrics,
    logger: options.logger,
    secrets: options.secrets,
    root: dirname(resolve(options.playbooksDir)),
    outputsDir: outputsRootOf(options.outputsDir),
    ...(options.oidc ? { oidc: options.oidc } : {}),
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.secureCookies ? { secureCookies: true } : {}),
  });
  await app.listen({ host: options.host, port: options.port });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : options.port;
  const urlHost =
    options.host === '0.0.0.0' || options.host === '::'
      ? '127.0.0.1'
      : options.host.includes(':')
        ? `[${options.host}]`
        : options.host;
  const url = `http://${urlHost}:${port}`;
  options.logger.info({ event: 'server.listening', url }, `server: listening on ${url}`);
  const waits = startWaitSweep({
    store,
    launcher,
    catalog,
    logger: options.logger,
    clock: options.clock ?? systemClock,
    everyMs: options.waitSweepMs ?? 15_000,
  });
  return {
    url,
    app,
    store,
    hub,
    launcher,
    metrics,
    async close() {
      // Streams end first, so closing the app does not wait for their clients.
      hub.close();
      await waits.stop();
      await launcher.stop();
      const closing = app.close();
      const drop = setTimeout(() => app.server.closeAllConnections(), options.closeGraceMs ?? 5_000);
      try {
        await closing;
      } finally {
        clearTimeout(drop);
      }
    },
  };
}
