/**
 * How `fleetbook runs show` summarises a large loop in its text view (see step-table.ts). A
 * module of its own so `runs.ts`, loaded by every command, can name the size in its help without
 * loading the renderer.
 */

/** A loop with this many items or fewer is printed whole. */
export const ITEMS_SHOWN_WHOLE = 20;
/** The first and the last items of a summarised loop printed in full: how it started and ended. */
export const EDGE_ITEMS = 3;
/** At most this many items needing attention printed in full per loop; the count says how many more. */
export const ATTENTION_ITEMS_SHOWN = 100;
