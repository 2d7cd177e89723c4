/**
 * The transparency log port: a Merkle tree over the whole event log in commit order (RFC 9162),
 * its signed checkpoints (C2SP `tlog-checkpoint` signed notes) and the proofs an auditor checks
 * them with: that an event is in the tree a checkpoint signs (inclusion), and that a later
 * checkpoint's tree extends an earlier one's unchanged (consistency). The store keeps the tree;
 * the HTTP API and the command line serve it.
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type * as Option from "effect/Option"
import * as Schema from "effect/Schema"

/** A signed checkpoint as kept: the tree size it signs and its signed note, byte for byte. */
export interface SignedCheckpoint {
  readonly size: number
  /** The C2SP signed note: origin, size, base64 root, a blank line, the signature line. */
  readonly note: string
  readonly signedAt: Date
}

/** The audit path of one event in the tree of `treeSize` leaves. */
export interface InclusionProof {
  readonly eventId: string
  /** The event's position in the tree (0-based, commit order). */
  readonly leafIndex: number
  readonly treeSize: number
  /** The event's chain hash (hex): the leaf is `SHA-256(0x00 ‖ these 32 bytes)`. */
  readonly eventHash: string
  /** The sibling hashes from the leaf up, RFC 9162 2.1.3.1. */
  readonly hashes: ReadonlyArray<Uint8Array>
}

/** The proof that the tree of `from` leaves is a prefix of the tree of `to` leaves (RFC 9162 2.1.4.1). */
export interface ConsistencyProof {
  readonly from: number
  readonly to: number
  readonly hashes: ReadonlyArray<Uint8Array>
}

/**
 * No event with this id is in the log's tree (not in the log, or not yet added to the tree).
 *
 * @category errors
 */
export class UnknownEvent extends Schema.TaggedError<UnknownEvent>()("UnknownEvent", {
  eventId: Schema.String
}) {}

/**
 * The tree sizes asked for do not fit: past the tree's size, below 1, or `from` after `to`.
 *
 * @category errors
 */
export class SizeOutOfRange extends Schema.TaggedError<SizeOutOfRange>()("SizeOutOfRange", {
  message: Schema.String,
  /** The tree's size when asked. */
  treeSize: Schema.Number
}) {}

/**
 * The event is in the tree, at a position not below the size asked for.
 *
 * @category errors
 */
export class NotInTreeOfSize extends Schema.TaggedError<NotInTreeOfSize>()("NotInTreeOfSize", {
  eventId: Schema.String,
  leafIndex: Schema.Number,
  treeSize: Schema.Number
}) {}

/**
 * The transparency log.
 *
 * @category services
 */
export class TransparencyLog extends Context.Tag("@cobro/domain/TransparencyLog")<
  TransparencyLog,
  {
    /** The verifier key checkpoints are signed with: `<origin>+<key id>+<base64 key>` (signed-note). */
    readonly verifierKey: string
    /** The number of events in the tree now. */
    readonly treeSize: Effect.Effect<number>
    /** The checkpoint signed last (the largest tree), if any. */
    readonly latestCheckpoint: Effect.Effect<Option.Option<SignedCheckpoint>>
    /** The checkpoint signed at exactly this tree size, if any. */
    readonly checkpointAt: (size: number) => Effect.Effect<Option.Option<SignedCheckpoint>>
    /** The audit path of an event in the tree of `treeSize` leaves. */
    readonly inclusionProof: (
      eventId: string,
      treeSize: number
    ) => Effect.Effect<InclusionProof, UnknownEvent | NotInTreeOfSize | SizeOutOfRange>
    /** The consistency proof between two tree sizes, `1 ≤ from ≤ to ≤` the tree's size. */
    readonly consistencyProof: (from: number, to: number) => Effect.Effect<ConsistencyProof, SizeOutOfRange>
  }
>() {}
