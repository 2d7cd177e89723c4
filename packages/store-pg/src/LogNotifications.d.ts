/**
 * Wake-ups for consumers of the log: a signal after appends commit, so that subscriptions need not
 * poll hard. PostgreSQL delivers it by LISTEN/NOTIFY; polling stays the fallback.
 */
import * as PgClient from "@effect/sql-pg/PgClient";
import * as Context from "effect/Context";
import * as Layer from "effect/Layer";
import * as Stream from "effect/Stream";
declare const LogNotifications_base: Context.TagClass<LogNotifications, "@cobro/store-pg/LogNotifications", {
    readonly appended: Stream.Stream<string>;
}>;
/** A stream that emits (the stream id, when known) after appends commit. May drop or merge signals. */
export declare class LogNotifications extends LogNotifications_base {
}
/** No wake-ups: consumers poll. */
export declare const layerNone: Layer.Layer<LogNotifications>;
/**
 * Wake-ups by `LISTEN cobro_events` on a dedicated PostgreSQL connection. A failing listener is
 * logged and retried: consumers keep polling meanwhile.
 */
export declare const layerListen: Layer.Layer<LogNotifications, never, PgClient.PgClient>;
export {};
//# sourceMappingURL=LogNotifications.d.ts.map