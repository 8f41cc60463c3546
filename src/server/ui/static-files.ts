/** The stylesheet and the run page's script, served as files (the Content-Security-Policy allows no inline ones). */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';

const STATIC_DIR = new URL('./static/', import.meta.url);
const STATIC_TYPES: Record<string, string> = {
  'app.css': 'text/css; charset=utf-8',
  'run.js': 'text/javascript; charset=utf-8',
};

export function registerStaticFiles(app: FastifyInstance): void {
  // Read once, at the first request of each.
  const statics = new Map<string, string>();
  app.get('/ui/static/:file', async (request, reply) => {
    const { file } = request.params as { file: string };
    const type = STATIC_TYPES[file];
    if (!type) return reply.status(404).send('not found');
    let text = statics.get(file);
    if (text === undefined) {
      text = readFileSync(fileURLToPath(new URL(file, STATIC_DIR)), 'utf8');
      statics.set(file, text);
    }
    return reply.header('content-type', type).header('cache-control', 'no-cache').send(text);
  });
}
