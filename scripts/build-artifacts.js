// Run by `npm run build` after tsc: writes into dist/ what the compiled package would otherwise
// compute at every start, the platform description's document as JSON and the playbook
// schema's validator as standalone code (see src/openapi/platform-document.ts and
// src/playbook/precompiled-validator.ts). Each is keyed by a digest of its source, so a
// file that no longer matches is never used. It also copies the web UI's stylesheet and
// scripts (src/server/ui/static/), which tsc does not, beside the compiled pages. Last, the
// stamp of a finished build that `npm start` compares with the sources (build-if-stale.js).
import { cpSync, writeFileSync } from 'node:fs';
import { writePlatformDocumentJson } from '../dist/openapi/platform-document.js';
import { defaultPlaybookSchema } from '../dist/playbook/load-playbook.js';
import { writePrecompiledValidator } from '../dist/playbook/precompiled-validator.js';

writePlatformDocumentJson();
writePrecompiledValidator(defaultPlaybookSchema());
cpSync('src/server/ui/static', 'dist/server/ui/static', { recursive: true });
writeFileSync('dist/.build-stamp', `${new Date().toISOString()}\n`);
