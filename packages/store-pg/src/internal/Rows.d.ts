/**
 * Rows of `cobro_events` as the `pg` driver returns them, and their decoding into the port's types.
 * @internal
 */
import type * as EventStore from "@cobro/domain/EventStore";
/**
 * The columns every read selects. `transaction_id` comes as text (`pg` has no xid8 parser) under
 * another name: an output column named `transaction_id` would make `ORDER BY transaction_id` sort
 * the text, not the xid8.
 */
export declare const columns = "global_position, stream_id, stream_version, event_id, type, schema_version, data, metadata, recorded_at, transaction_id::text AS transaction_xid, prev_hash, hash";
/** A `cobro_events` row: int8 and xid8 arrive as strings, jsonb parsed, timestamptz as a Date. */
export interface EventRow {
    readonly global_position: string;
    readonly stream_id: string;
    readonly stream_version: number;
    readonly event_id: string;
    readonly type: string;
    readonly schema_version: number;
    readonly data: unknown;
    readonly metadata: unknown;
    readonly recorded_at: Date;
    readonly transaction_xid: string;
    readonly prev_hash: string;
    readonly hash: string;
}
/** A row as the port's `RecordedEvent`. */
export declare const toRecorded: (row: EventRow) => EventStore.RecordedEvent;
/** A row as the port's `LoggedEvent`: with the checkpoint that resumes after it. */
export declare const toLogged: (row: EventRow) => EventStore.LoggedEvent;
//# sourceMappingURL=Rows.d.ts.map