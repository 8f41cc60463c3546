import type { SimulatorControl } from './control.js';
import { createControl, registerControlRoutes } from './control.js';
import { createHttpApp, listen } from './http-app.js';
import { createInputCheck } from './input-validation.js';
import { createOperationPipeline } from './operation-pipeline.js';
import { createResponseChecker } from './response-check.js';
import { registerExtraRoutes, registerFallbacks, registerOperationRoutes } from './routes.js';
import { createSchemaValidator } from './schema-validator.js';
import { createSimulation, type SimulatorOptions } from './simulation.js';
import type { ApiClient } from './world-file.js';
import { replaySnapshot } from './world-snapshot.js';

export interface Simulator {
  /** Origin, e.g. `http://127.0.0.1:43121`. */
  url: string;
  baseUrl: string;
  authUrl: string;
  /** Regional base address with a `{region}` placeholder. */
  regionalUrl: string;
  port: number;
  clients: ApiClient[];
  control: SimulatorControl;
  close(): Promise<void>;
}

/**
 * Starts the platform simulator: one origin serving the token endpoint, every global and
 * regional operation of the description, and the `/_sim/` control surface.
 * See ARCHITECTURE.md for the request pipeline and the module of each step.
 */
export async function startSimulator(options: SimulatorOptions = {}): Promise<Simulator> {
  const sim = createSimulation(options);
  // One ajv instance compiles the input and the response schemas.
  const validator = createSchemaValidator();
  const serve = createOperationPipeline(
    sim,
    createInputCheck(validator),
    createResponseChecker(validator, sim.violations),
  );
  const app = createHttpApp(options.logger ?? false);
  registerOperationRoutes(app, sim.description.operations, serve);
  registerExtraRoutes(app, sim);
  const control = createControl(sim);
  registerControlRoutes(app, control);
  registerFallbacks(app, sim);
  const { url, port } = await listen(app, options.host ?? '127.0.0.1', options.port ?? 0);
  // After listening: links the replayed writes put in the world name this simulator's origin.
  if (options.restore) {
    try {
      await replaySnapshot(sim, options.restore, url);
    } catch (error) {
      await app.close();
      throw error;
    }
  }
  return {
    url,
    baseUrl: url,
    authUrl: url,
    regionalUrl: `${url}/regions/{region}`,
    port,
    clients: sim.clients,
    control,
    close: () => app.close(),
  };
}
