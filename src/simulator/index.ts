/** The platform simulator, served in-process (`fleetbook/simulator`). */
export { startSimulator, DEFAULT_CLIENTS, REGION_HEADER, type Simulator, type SimulatorOptions } from './server.js';
export type { SimulatorControl, ResponseViolation } from './control.js';
export type { FaultRule, AsyncFaultRule, FaultSettings } from './faults.js';
export type { ApiClient, Role, WorldFile } from './world-file.js';
export type { RequestLogEntry } from './request-log.js';
