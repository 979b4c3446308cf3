export { startSimulator, type RunningSimulator } from './simulator.js';
export type { FaultOptions, LatencyOption, SimulatorMode, SimulatorOptions, SimulatorUser } from './options.js';
export { ALL_CAPABILITIES, MANAGER_CAPABILITIES, SimulatorOptionsError } from './options.js';
export type { SimulatorTruth, TruthContact } from './truth.js';
export type { SimulatorStats } from './server.js';
export type { ChurnHandle, ChurnOptions } from './churn.js';
export type { MutateApi } from './mutate.js';
export { EVENT_NAMES, type EventName } from './events.js';
export { RETRY_INTERVALS_MS, DISABLE_AFTER_FAILURES, USER_AGENT } from './webhook-dispatcher.js';
