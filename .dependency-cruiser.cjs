/**
 * The import rules of docs/architecture.md, checked by `npm run lint`:
 *
 *   cli ──► scheduler ──► engine            cli ──► simulator (nothing else imports it)
 *   cli ──► engine ──► steps ──► api ──► undici
 *           engine ──► playbook ──► steps;  engine ──► expressions, store;  scheduler ──► store
 *   model (the loaded playbook as data): a leaf every module may import, importing nothing
 *   errors, logging, openapi (the platform description), timers, windows: leaves imported by all
 *   cli ──► server ──► scheduler, engine, store (nothing else imports server)
 *   cli, scheduler ──► notifications ──► store, playbook (its types), expressions; the engine never imports it
 *   cli, server ──► admission ──► scheduler, engine, notifications (every door's run request, admission and drive)
 *
 * Each rule names a folder and the folders it must not import.
 */
const layer = (name, from, forbidden) => ({
  name,
  severity: 'error',
  comment: `${from} must not import ${forbidden.join(', ')} (docs/architecture.md)`,
  from: { path: `^src/${from}/` },
  to: { path: `^src/(${forbidden.join('|')})/` },
});

/** The layers over the scheduler: admission (every door's one way in), then the server and the CLI. */
const above = ['cli', 'simulator', 'server', 'admission'];

/** Modules whose imports of other modules go through those modules' `index.ts` (their public surface): all of them. */
const throughIndex = [
  'engine',
  'steps',
  'playbook',
  'timers',
  'errors',
  'logging',
  'expressions',
  'store',
  'openapi',
  'api',
  'cli',
  'scheduler',
  'simulator',
  'server',
  'windows',
  'notifications',
  'admission',
  'model',
];
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'Import cycles make load order matter and layers meaningless.',
      from: {},
      to: { circular: true, viaOnly: { dependencyTypesNot: ['type-only'] } },
    },
    {
      name: 'through-index',
      severity: 'error',
      comment: 'another module is imported through its index.ts, not its files (docs/architecture.md)',
      from: { path: `^src/(${throughIndex.join('|')})/`, pathNot: '\\.test(-kit)?\\.ts$' },
      to: { path: '^src/([^/]+)/.+', pathNot: ['^src/$1/', '^src/[^/]+/index\\.ts$'] },
    },
    // The loaded playbook as data: a leaf below every module, importing none of them.
    {
      name: 'model-leaf',
      severity: 'error',
      comment: 'model imports nothing of Fleetbook (docs/architecture.md)',
      from: { path: '^src/model/' },
      to: { path: '^src/', pathNot: '^src/model/' },
    },
    layer('leaves-errors', 'errors', [
      'api',
      'steps',
      'playbook',
      'engine',
      'scheduler',
      'store',
      'cli',
      'simulator',
      'server',
      'expressions',
      'logging',
      'openapi',
      'notifications',
    ]),
    layer('leaves-logging', 'logging', [
      'api',
      'steps',
      'playbook',
      'engine',
      'scheduler',
      'store',
      'cli',
      'simulator',
      'server',
      'expressions',
      'openapi',
      'notifications',
    ]),
    layer('leaves-timers', 'timers', [
      'api',
      'steps',
      'playbook',
      'engine',
      'scheduler',
      'store',
      'cli',
      'simulator',
      'server',
      'expressions',
      'logging',
      'openapi',
      'notifications',
    ]),
    layer('leaves-windows', 'windows', [
      'api',
      'steps',
      'playbook',
      'engine',
      'scheduler',
      'store',
      'cli',
      'simulator',
      'expressions',
      'logging',
      'openapi',
    ]),
    layer('leaves-openapi', 'openapi', [
      'api',
      'steps',
      'playbook',
      'engine',
      'scheduler',
      'store',
      'cli',
      'simulator',
      'server',
      'expressions',
      'notifications',
    ]),
    layer('api', 'api', [
      'steps',
      'playbook',
      'engine',
      'scheduler',
      'store',
      'expressions',
      ...above,
      'notifications',
    ]),
    // Step definitions build and run loaded steps: they read the model's types; the loader calls them, never the reverse.
    layer('steps', 'steps', ['playbook', 'engine', 'scheduler', ...above, 'notifications']),
    // Step executors describe their results in the journal's terms (types only); they never write to the store.
    { ...layer('steps-store', 'steps', ['store']), to: { path: '^src/store/', dependencyTypesNot: ['type-only'] } },
    layer('playbook', 'playbook', ['engine', 'scheduler', 'store', 'api', ...above, 'notifications']),
    layer('expressions', 'expressions', [
      'api',
      'steps',
      'playbook',
      'engine',
      'scheduler',
      'store',
      ...above,
      'notifications',
    ]),
    layer('store', 'store', [
      'api',
      'steps',
      'playbook',
      'engine',
      'scheduler',
      'expressions',
      ...above,
      'notifications',
    ]),
    layer('engine', 'engine', ['scheduler', 'notifications', ...above]),
    // The engine records what its `notify` hook returns; it never knows channels or how they are sent.
    layer('notifications', 'notifications', ['api', 'steps', 'engine', 'scheduler', ...above]),
    layer('scheduler', 'scheduler', above),
    layer('simulator', 'simulator', [
      'api',
      'steps',
      'playbook',
      'engine',
      'scheduler',
      'store',
      'expressions',
      'cli',
      'server',
      'admission',
    ]),
    // Every door admits its runs here; admission knows no door's own module.
    layer('admission', 'admission', ['cli', 'server', 'simulator']),
    layer('server', 'server', ['cli', 'simulator']),
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)(dist|node_modules)/' },
    // See type-only imports too, so a layer cannot lean on another through its types.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
