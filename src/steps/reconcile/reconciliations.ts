/**
 * How each write operation is reconciled when resume finds it sent with no answer journaled
 * (the process died, or the connection dropped, after the request left). Data, not code: one
 * declaration per write operation of the platform description, read by `reconcileWrite`; a
 * test checks that every write has one. Those declared `cannot` make resume stop before them
 * unless the operator passes `--confirm-unknown` (docs/resume.md lists them by name).
 *
 * Pointers are JSON-pointer-like paths into the write's rendered input (`/id`, `/body/name`);
 * `*` walks every element of an array (`/body/compute/*\/serialNumber`).
 */

/**
 * A software write of a system: its clusters show the operation it started in their published
 * `currentUpdateStatus` (`state`, `catalogVersion`, `taskUri`: the operation's path).
 */
export interface UpdateStatusReconciliation {
  kind: 'updateStatus';
  /** The read of the system: an operation id and its parameters as pointers into the write's input. */
  read: { operationId: string; params: Record<string, string> };
  /** The states the write's operation shows, by their prefix: `PRECHECK_` or `UPDATE_`. */
  statePrefix: string;
  /** Pointer to the catalog version the write names (absent: any, as for a resume). */
  catalogVersion?: string;
  /** Pointer to the cluster ids the write names (none given: every cluster of the system). */
  clusterIds: string;
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

/**
 * Sending the write again leaves the platform as one send would (a PUT or PATCH of the same
 * values, a refresh, a delete): it is simply sent again. `goneWhen404`: for a delete, a read
 * of the resource first; a 404 means the lost request deleted it (done), since sending it
 * again would fail with that 404.
 */
export interface RepeatableReconciliation {
  kind: 'repeatable';
  /** Why sending again is harmless, for the log line of the decision. */
  reason: string;
  goneWhen404?: { operationId: string; params: Record<string, string> };
}

/** The write's effect cannot be told apart from an earlier one of the same kind. */
export interface NoReconciliation {
  kind: 'cannot';
  reason: string;
}

export type Reconciliation =
  UpdateStatusReconciliation | RecordsReconciliation | RepeatableReconciliation | NoReconciliation;

const systemRead = { operationId: 'privateCloud.getSystem', params: { id: '/id' } } as const;

/** The reconciliation of each write operation, by operation id. */
export const reconciliations: Readonly<Record<string, Reconciliation>> = {
  'privateCloud.runSoftwarePrechecks': {
    kind: 'updateStatus',
    read: systemRead,
    statePrefix: 'PRECHECK_',
    catalogVersion: '/body/catalogVersion',
    clusterIds: '/body/hypervisorClusterIds',
  },
  'privateCloud.runSoftwareUpdate': {
    kind: 'updateStatus',
    read: systemRead,
    statePrefix: 'UPDATE_',
    catalogVersion: '/body/catalogVersion',
    clusterIds: '/body/hypervisorClusterIds',
  },
  // A resume names no inputs: it continues the failed update on that update's clusters.
  'privateCloud.resumeSoftwareUpdate': {
    kind: 'updateStatus',
    read: systemRead,
    statePrefix: 'UPDATE_',
    clusterIds: '/body/hypervisorClusterIds',
  },
  'devices.addDevices': {
    kind: 'records',
    list: 'devices.listDevices',
    field: 'serialNumber',
    filterable: true,
    keys: ['/body/network/*/serialNumber', '/body/compute/*/serialNumber', '/body/storage/*/serialNumber'],
  },
  'users.inviteUser': {
    kind: 'records',
    list: 'users.listUsers',
    field: 'username',
    filterable: true,
    keys: ['/body/email'],
  },
  'workspaces.createTenant': {
    kind: 'records',
    list: 'workspaces.listTenants',
    field: 'workspaceName',
    filterable: false,
    keys: ['/body/workspaceName'],
  },
  'privateCloud.createProvisioningPolicy': {
    kind: 'records',
    list: 'privateCloud.listProvisioningPolicies',
    field: 'name',
    filterable: true,
    keys: ['/body/name'],
  },
  'subscriptions.addSubscriptions': {
    kind: 'records',
    list: 'subscriptions.listSubscriptions',
    field: 'key',
    filterable: true,
    keys: ['/body/subscriptions/*/key'],
  },
  'privateCloud.refreshSoftwareVersions': {
    kind: 'repeatable',
    reason: 'a refresh of the versions the system offers changes nothing another refresh would not',
  },
  'privateCloud.refreshSoftwareVersionsByGet': {
    kind: 'repeatable',
    reason: 'a refresh of the versions the system offers changes nothing another refresh would not',
  },
  'privateCloud.updateSystem': {
    kind: 'repeatable',
    reason: 'a merge patch sets the same location fields to the same values again',
  },
  'privateCloud.startConfigurationAnalysis': {
    kind: 'repeatable',
    reason: 'a second analysis of the same system only adds a newer report, which the list then shows as its latest',
  },
  'privateCloud.updateProvisioningPolicy': {
    kind: 'repeatable',
    reason: 'a PATCH sets the same fields to the same values again',
  },
  'privateCloud.deleteProvisioningPolicy': {
    kind: 'repeatable',
    reason: 'a delete of a policy that is still there deletes it',
    goneWhen404: { operationId: 'privateCloud.getProvisioningPolicy', params: { id: '/id' } },
  },
  'devices.updateDevices': {
    kind: 'repeatable',
    reason: 'a PATCH sets the same fields of the same devices to the same values again',
  },
  'subscriptions.updateSubscriptions': {
    kind: 'repeatable',
    reason: 'a PATCH sets the same fields of the same subscriptions to the same values again',
  },
  'subscriptions.updateAutoSubscriptionSettings': {
    kind: 'repeatable',
    reason: 'a PATCH sets the same settings to the same values again',
  },
  'workspaces.updateTenant': { kind: 'repeatable', reason: 'a PUT replaces the tenant with the same record again' },
  'workspaces.deleteTenant': {
    kind: 'repeatable',
    reason: 'a delete of a tenant that is still there deletes it',
    goneWhen404: { operationId: 'workspaces.getWorkspace', params: { workspaceId: '/tenantId' } },
  },
  'workspaces.createCredential': {
    kind: 'cannot',
    reason:
      "a credential's secret is shown only in the create's answer: found again by its name, the credential has no secret to give, and a second create of the name is refused",
  },
  'workspaces.resetCredential': {
    kind: 'repeatable',
    reason:
      "the new secret was only in the lost answer: resetting again is the only way to learn the credential's current secret",
  },
  'workspaces.deleteCredential': {
    kind: 'cannot',
    reason:
      'no operation reads one credential, so a 404 from sending the delete again cannot tell a credential the lost request deleted from a wrong id',
  },
  'users.updateUserPreferences': { kind: 'repeatable', reason: 'a PUT sets the same preferences again' },
  'users.deleteUser': {
    kind: 'repeatable',
    reason: 'a delete of a user that is still there deletes it',
    goneWhen404: { operationId: 'users.getUser', params: { id: '/id' } },
  },
  'privateCloud.addHypervisorCluster': {
    kind: 'cannot',
    reason:
      "the system read does not document its clusters' names, so a cluster the lost request added cannot be found; sending it again may add a second one",
  },
  'reporting.createReportExport': {
    kind: 'cannot',
    reason:
      'an export leaves no trace that tells it apart from another export of the same report; sending it again e-mails the recipients twice',
  },
  'reportingV1alpha1.createReportExport': {
    kind: 'cannot',
    reason:
      'an export leaves no trace that tells it apart from another export of the same report; sending it again e-mails the recipients twice',
  },
};

/** The declaration for `operationId`, or a `cannot` one for a write without one (a test keeps that from happening). */
export function reconciliationOf(operationId: string): Reconciliation {
  return reconciliations[operationId] ?? { kind: 'cannot', reason: `no reconciliation is declared for ${operationId}` };
}
