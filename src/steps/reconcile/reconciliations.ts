/**
 * How each write operation is reconciled when resume finds it sent with no answer journaled
 * (the process died, or the connection dropped, after the request left). Data, not code: one
 * declaration per operation id, read by `reconcileWrite`. An operation absent from this table
 * cannot be reconciled: resume stops before it unless the operator passes `--confirm-unknown`
 * (the list is in docs/resume.md; `nonReconcilableWrites` names them).
 *
 * Pointers are JSON-pointer-like paths into the write's rendered input (`/id`, `/body/name`);
 * `*` walks every element of an array (`/body/compute/*\/serialNumber`).
 */

/** The write starts an async operation that the resource shows as its last one. */
export interface LastOperationReconciliation {
  kind: 'lastOperation';
  /** The read of the resource: an operation id and its parameters as pointers into the write's input. */
  read: { operationId: string; params: Record<string, string> };
  /** Pointer into the read's body to the operation reference (`id`, `type`, `location`, `state`, inputs). */
  at: string;
  /** The operation type the write starts. */
  type: string;
  /** Fields of the reference that must equal the write's input at the pointer (arrays compared as sets; an input left out matches anything). */
  sameAs: Record<string, string>;
}

/** The write creates records found again by a key (a serial number, an e-mail, a name). */
export interface RecordsReconciliation {
  kind: 'records';
  /** The list operation (paged). */
  list: string;
  /** The record field holding the key. */
  field: string;
  /** Whether the list takes an OData `filter` on `field`; otherwise every page is read. */
  filterable: boolean;
  /** Pointers into the write's input giving the keys of the records it creates. */
  keys: string[];
}

/** The write's effect cannot be told apart from an earlier one of the same kind. */
export interface NoReconciliation {
  kind: 'none';
  reason: string;
}

export type Reconciliation = LastOperationReconciliation | RecordsReconciliation | NoReconciliation;

const systemRead = { operationId: 'privateCloud.getSystem', params: { id: '/id' } } as const;
const softwareOperation = '/softwareInfo/lastOperation';
const sameSoftwareInputs = { catalogVersion: '/body/catalogVersion', hypervisorClusterIds: '/body/hypervisorClusterIds' } as const;

/** The reconciliation of each write operation, by operation id. */
export const reconciliations: Readonly<Record<string, Reconciliation>> = {
  'privateCloud.runSoftwarePrechecks': { kind: 'lastOperation', read: systemRead, at: softwareOperation, type: 'software-prechecks', sameAs: sameSoftwareInputs },
  'privateCloud.runSoftwareUpdate': { kind: 'lastOperation', read: systemRead, at: softwareOperation, type: 'software-update', sameAs: sameSoftwareInputs },
  'privateCloud.resumeSoftwareUpdate': { kind: 'lastOperation', read: systemRead, at: softwareOperation, type: 'software-update-resume', sameAs: {} },
  'devices.addDevices': {
    kind: 'records',
    list: 'devices.listDevices',
    field: 'serialNumber',
    filterable: true,
    keys: ['/body/network/*/serialNumber', '/body/compute/*/serialNumber', '/body/storage/*/serialNumber'],
  },
  'users.inviteUser': { kind: 'records', list: 'users.listUsers', field: 'username', filterable: true, keys: ['/body/email'] },
  'workspaces.createTenant': { kind: 'records', list: 'workspaces.listTenants', field: 'workspaceName', filterable: false, keys: ['/body/workspaceName'] },
  'privateCloud.createProvisioningPolicy': { kind: 'records', list: 'privateCloud.listProvisioningPolicies', field: 'name', filterable: true, keys: ['/body/name'] },
  'subscriptions.addSubscriptions': { kind: 'records', list: 'subscriptions.listSubscriptions', field: 'key', filterable: true, keys: ['/body/subscriptions/*/key'] },
  'reporting.createReportExport': {
    kind: 'none',
    reason: 'an export leaves no trace that tells it apart from another export of the same report; sending it again e-mails the recipients twice',
  },
};

/** The declaration for `operationId`, or a `none` one naming why a write without one cannot be reconciled. */
export function reconciliationOf(operationId: string): Reconciliation {
  return reconciliations[operationId] ?? { kind: 'none', reason: `no reconciliation is declared for ${operationId}` };
}
