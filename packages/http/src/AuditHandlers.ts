/**
 * Handlers of the audit API over the `TransparencyLog` port: signed notes served as stored, proofs'
 * hashes in base64 (standard, padded), and the port's errors in the envelope (400, 404; never a 500
 * for a client's mistake).
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as TransparencyLog from "@cobro/domain/TransparencyLog"
import * as Effect from "effect/Effect"
import * as Encoding from "effect/Encoding"
import * as Option from "effect/Option"
import { CobroApi } from "@cobro/api/Api"
import type * as AuditEndpoints from "@cobro/api/AuditEndpoints"
import * as Errors from "@cobro/api/Errors"

const noCheckpoint = (message: string) => Errors.NotFound.of(Errors.Codes.CheckpointNotFound, message)

const base64 = (hashes: ReadonlyArray<Uint8Array>): Array<string> => hashes.map(Encoding.encodeBase64)

/** The consistency proof's 400: which size is out of range, and the tree's size. */
const consistencyOutOfRange = (from: number, to: number, error: TransparencyLog.SizeOutOfRange) =>
  Errors.BadRequest.of(
    Errors.Codes.TreeSizeOutOfRange,
    `from and to must satisfy 1 ≤ from ≤ to ≤ ${error.treeSize}, the tree's size`,
    to > error.treeSize ? "to" : from > to ? "from" : undefined
  )

/** The inclusion proof's errors in the envelope. */
const fromInclusionError = (
  error: TransparencyLog.UnknownEvent | TransparencyLog.NotInTreeOfSize | TransparencyLog.SizeOutOfRange
): Errors.BadRequest | Errors.NotFound => {
  switch (error._tag) {
    case "UnknownEvent":
      return Errors.NotFound.of(
        Errors.Codes.EventNotFound,
        "no event with this id is in the log's tree (it may not have been added yet)",
        "event_id"
      )
    case "NotInTreeOfSize":
      return Errors.NotFound.of(
        Errors.Codes.EventNotInTree,
        `the event's leaf index, ${error.leafIndex}, is not below tree_size ${error.treeSize}: ask the proof in a larger checkpoint`,
        "tree_size"
      )
    case "SizeOutOfRange":
      return Errors.BadRequest.of(
        Errors.Codes.TreeSizeOutOfRange,
        `tree_size must be from 1 to ${error.treeSize}, the tree's size`,
        "tree_size"
      )
  }
}

const inclusionProof = Effect.fn("AuditHandlers.inclusionProof")(function* (
  params: typeof AuditEndpoints.InclusionParams.Type
) {
  const log = yield* TransparencyLog.TransparencyLog
  const treeSize =
    params.tree_size ??
    (yield* log.latestCheckpoint.pipe(
      Effect.flatMap(
        Option.match({
          onNone: () => Effect.fail(noCheckpoint("no checkpoint has been signed yet: give a tree_size")),
          onSome: (checkpoint) => Effect.succeed(checkpoint.size)
        })
      )
    ))
  const proof = yield* log.inclusionProof(params.event_id, treeSize).pipe(Effect.mapError(fromInclusionError))
  return {
    event_id: proof.eventId,
    leaf_index: proof.leafIndex,
    tree_size: proof.treeSize,
    event_hash: proof.eventHash,
    hashes: base64(proof.hashes)
  }
})

/** The public audit handlers. */
export const layer = HttpApiBuilder.group(CobroApi, "audit", (handlers) =>
  handlers
    .handle("latestCheckpoint", () =>
      Effect.flatMap(TransparencyLog.TransparencyLog, (log) => log.latestCheckpoint).pipe(
        Effect.flatMap(
          Option.match({
            onNone: () => Effect.fail(noCheckpoint("no checkpoint has been signed yet")),
            onSome: (checkpoint) => Effect.succeed(checkpoint.note)
          })
        )
      )
    )
    .handle("checkpointAt", ({ path }) =>
      Effect.flatMap(TransparencyLog.TransparencyLog, (log) => log.checkpointAt(path.tree_size)).pipe(
        Effect.flatMap(
          Option.match({
            onNone: () =>
              Effect.fail(noCheckpoint(`no checkpoint was signed at tree size ${path.tree_size}`)),
            onSome: (checkpoint) => Effect.succeed(checkpoint.note)
          })
        )
      )
    )
    .handle("publicKey", () => Effect.map(TransparencyLog.TransparencyLog, (log) => `${log.verifierKey}\n`))
    .handle("consistencyProof", ({ urlParams: { from, to } }) =>
      Effect.flatMap(TransparencyLog.TransparencyLog, (log) => log.consistencyProof(from, to)).pipe(
        Effect.map((proof) => ({ from: proof.from, to: proof.to, hashes: base64(proof.hashes) })),
        Effect.mapError((error) => consistencyOutOfRange(from, to, error))
      )
    )
)

/** The admin audit handlers: inclusion proofs. */
export const layerAdmin = HttpApiBuilder.group(CobroApi, "auditAdmin", (handlers) =>
  handlers.handle("inclusionProof", ({ urlParams }) => inclusionProof(urlParams))
)
