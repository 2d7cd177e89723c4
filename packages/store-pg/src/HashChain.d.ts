/** The fields of an event that the hash covers. */
export interface HashedFields {
    readonly streamId: string;
    readonly streamVersion: number;
    readonly eventId: string;
    readonly type: string;
    readonly schemaVersion: number;
    readonly data: unknown;
    readonly metadata: unknown;
    readonly recordedAt: Date;
}
/** The `prevHash` of a stream's first event. */
export declare const genesis = "";
/**
 * Canonical JSON of a JSON value (RFC 8785 style): sorted keys, no whitespace. `undefined` members
 * are dropped as `JSON.stringify` drops them; non-finite numbers, bigints and functions are refused
 * because PostgreSQL's `jsonb` could not store them faithfully.
 */
export declare const canonicalJson: (value: unknown) => string;
/** The canonical bytes of one event (step 1 and 2 above), as a string to be UTF-8 encoded. */
export declare const canonicalEvent: (event: HashedFields) => string;
/**
 * {@link canonicalEvent} split around the stream version: `before + String(streamVersion) + after`
 * is the canonical text (the version is the one member that follows `"streamVersion":`). The store
 * passes both halves to `cobro_append`, which knows the version only under the stream head's lock.
 */
export declare const canonicalEventAround: (event: Omit<HashedFields, "streamVersion">) => readonly [before: string, after: string];
/** `hex(sha256(utf8(prevHash) ‖ utf8(canonicalEvent(event))))`: the link of `event` in its chain. */
export declare const hashEvent: (prevHash: string, event: HashedFields) => string;
/**
 * A JSON value as PostgreSQL's `jsonb` will give it back (through `JSON.parse`): what the hash is
 * computed over, so that the writer and a later verifier agree.
 */
export declare const normalizeJson: (value: unknown) => unknown;
//# sourceMappingURL=HashChain.d.ts.map