/** The `--log-level` choices of run, resume and daemon (pino's levels), apart so registering a command loads no logger. */
export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;
