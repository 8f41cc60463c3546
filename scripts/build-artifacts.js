// Run by `npm run build` after tsc: writes into dist/ what the compiled package reads at run
// time instead of computing it at every start (see src/openapi/platform-document.ts).
import { writePlatformDocumentJson } from '../dist/openapi/platform-document.js';

writePlatformDocumentJson();
