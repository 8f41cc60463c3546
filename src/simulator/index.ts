/** The platform simulator, served in-process (`fleetbook/simulator`). */
export { startSimulator, type Simulator } from './server.js';
export { DEFAULT_CLIENTS, type SimulatorOptions } from './simulation.js';
export { REGION_HEADER } from './regions.js';
export type { SimulatorControl } from './control.js';
export type { ResponseViolation } from './response-check.js';
export type { FaultRule, AsyncFaultRule, FaultSettings } from './faults.js';
export type { ApiClient, Role, WorldFile } from './world-file.js';
export type { RequestLogEntry } from './request-log.js';
export { snapshotProblem, SNAPSHOT_FORMAT, type SimulatorSnapshot } from './world-snapshot.js';
