/** `fleetbook server`: the HTTP API, the run event streams, `/metrics` and the web UI (see docs/server.md). */
export { createServerApp, type ServerAppOptions } from './app.js';
export { HttpError } from './app-error.js';
export { API_DOCUMENT_PATH, apiRoute, readApiDocument } from './api-document.js';
export { createJournalHub, isLiveStatus, type JournalHub } from './journal-hub.js';
export {
  createProcessMetrics,
  createServerMetrics,
  type ProcessMetrics,
  type ServerMetrics,
  type ServerMetricsOptions,
} from './metrics.js';
export { startMetricsEndpoint, type MetricsEndpoint } from './metrics-endpoint.js';
export { observeStore, type StoreListener } from './observed-store.js';
export { createPlaybookCatalog, type PlaybookCatalog } from './playbook-catalog.js';
export { createRunLauncher, type RunLauncher, type RunLauncherOptions } from './run-launcher.js';
export {
  describeRole,
  issueApiToken,
  verifyApiToken,
  roleAllows,
  roleFor,
  parsePlaybookPatterns,
  parseTokenRole,
  TOKEN_ROLES,
} from './tokens.js';
export { startServer, type ServerOptions, type RunningServer } from './start-server.js';
export { CONTENT_SECURITY_POLICY } from './ui/pages.js';
export { MAX_ITEM_BARS, ITEM_GROUPS } from './ui/timeline.js';
export { ServerErrorCode } from './error-codes.js';
export { loadOidcConfig, parseOidcConfig, type OidcSettings } from './oidc-config.js';
