/** `npm run generate:schema`: writes `schemas/playbook.schema.json` from the registry and the operations. */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { loadPlatformDescription } from '../openapi/index.js';
import { createStepRegistry } from '../steps/index.js';
import { playbookSchemaText } from './playbook-schema.js';

const target = fileURLToPath(new URL('../../schemas/playbook.schema.json', import.meta.url));
writeFileSync(target, playbookSchemaText(createStepRegistry(), loadPlatformDescription()));
process.stdout.write(`wrote ${target}\n`);
