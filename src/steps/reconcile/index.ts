/** Reconciling writes of unknown outcome on resume (see reconciliations.ts). */
export {
  reconcileWrite,
  valuesAt,
  type ReconcileDecision,
  type ReconcileRequest,
  type ReconcileContext,
} from './reconcile-write.js';
export { reconciliations, reconciliationOf, type Reconciliation } from './reconciliations.js';
