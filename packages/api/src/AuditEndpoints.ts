/**
 * The transparency log's API (`TransparencyLog`): signed checkpoints (C2SP `tlog-checkpoint` signed
 * notes, as text, byte for byte as signed), the verifier key, and the RFC 9162 proofs an auditor
 * checks them with. Checkpoints, the key and consistency proofs name no event and are public; an
 * inclusion proof answers whether an event exists, across merchants, so it takes the admin token.
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import * as Schema from "effect/Schema"
import * as Security from "./Security.js"
import * as Errors from "./Errors.js"

// At most 15 digits: every such number is a safe integer, and no tree will be larger.
const NON_NEGATIVE = /^(0|[1-9][0-9]{0,14})$/
const POSITIVE = /^[1-9][0-9]{0,14}$/

/**
 * A tree size as the path or query writes it: a decimal integer without sign or leading zeros,
 * decoded to a number. Anything else is a 400 `ValidationError` naming the field.
 */
const treeSize = (field: string, positive: boolean) => {
  const message = () =>
    `${field} must be a ${positive ? "positive" : "non-negative"} decimal integer (no sign, no leading zeros)`
  // The same message when the parameter is repeated (an array, not a string).
  return Schema.String.annotations({ message }).pipe(
    Schema.pattern(positive ? POSITIVE : NON_NEGATIVE, { message }),
    Schema.compose(Schema.NumberFromString),
    Schema.annotations({
      description: `A tree size: a ${positive ? "positive" : "non-negative"} decimal integer.`
    })
  )
}

/** A required query parameter whose absence is a 400 naming it. */
const required = <S extends Schema.Schema.Any>(field: string, schema: S) =>
  Schema.propertySignature(schema).annotations({ missingMessage: () => `${field} is required` })

const PlainText = HttpApiSchema.Text({ contentType: "text/plain; charset=utf-8" })

/**
 * A signed checkpoint: UTF-8 text, byte for byte as signed.
 *
 * @category schemas
 */
export const SignedNote = PlainText.annotations({
  description:
    "A C2SP tlog-checkpoint signed note: origin, tree size, base64 root hash, a blank line, the signature line"
})

/**
 * The verifier key, then a newline.
 *
 * @category schemas
 */
export const VerifierKey = PlainText.annotations({
  description: "The signed-note verifier key `<origin>+<hex key id>+<base64 key>`, then a newline"
})

/**
 * `GET /audit/v1/checkpoints/{tree_size}`.
 *
 * @category schemas
 */
export const CheckpointPath = Schema.Struct({ tree_size: treeSize("tree_size", false) })

/**
 * `GET /audit/v1/proofs/consistency`.
 *
 * @category schemas
 */
export const ConsistencyParams = Schema.Struct({
  from: required("from", treeSize("from", true)),
  to: required("to", treeSize("to", true))
})

/**
 * 200 of a consistency proof (RFC 9162 2.1.4.1): the hashes in base64, from the leaves up.
 *
 * @category schemas
 */
export const ConsistencyProofBody = Schema.Struct({
  from: Schema.Int,
  to: Schema.Int,
  hashes: Schema.Array(Schema.String.annotations({ description: "SHA-256, base64" }))
}).annotations({ identifier: "AuditConsistencyProof" })

/**
 * `GET /audit/v1/proofs/inclusion`: `tree_size` defaults to the latest checkpoint's.
 *
 * @category schemas
 */
export const InclusionParams = Schema.Struct({
  event_id: required(
    "event_id",
    Schema.String.annotations({ message: () => "event_id must be given once" }).pipe(
      Schema.minLength(1, { message: () => "event_id is required" })
    )
  ),
  tree_size: Schema.optional(treeSize("tree_size", true))
})

/**
 * 200 of an inclusion proof (RFC 9162 2.1.3.1): the audit path in base64, from the leaf up.
 *
 * @category schemas
 */
export const InclusionProofBody = Schema.Struct({
  event_id: Schema.String,
  leaf_index: Schema.Int.annotations({ description: "The event's position in the tree, from 0" }),
  tree_size: Schema.Int,
  event_hash: Schema.String.annotations({
    description: "The event's chain hash, hex; the leaf hash is SHA-256(0x00 ‖ these 32 bytes)"
  }),
  hashes: Schema.Array(Schema.String.annotations({ description: "SHA-256, base64" }))
}).annotations({ identifier: "AuditInclusionProof" })

/**
 * The public audit group: checkpoints, the verifier key and consistency proofs; no key needed.
 *
 * @category groups
 */
export class AuditGroup extends HttpApiGroup.make("audit")
  .add(
    HttpApiEndpoint.get("latestCheckpoint", "/audit/v1/checkpoints/latest")
      .addSuccess(SignedNote)
      .addError(Errors.NotFound)
      .annotate(
        OpenApi.Description,
        "The checkpoint signed last (the largest tree): a C2SP tlog-checkpoint signed note, byte for byte as signed. 404 `CheckpointNotFound` before the first one."
      )
  )
  .add(
    HttpApiEndpoint.get("checkpointAt", "/audit/v1/checkpoints/:tree_size")
      .setPath(CheckpointPath)
      .addSuccess(SignedNote)
      .addError(Errors.BadRequest)
      .addError(Errors.NotFound)
      .annotate(
        OpenApi.Description,
        "The checkpoint signed at exactly this tree size. 404 `CheckpointNotFound` when none was signed at it."
      )
  )
  .add(
    HttpApiEndpoint.get("publicKey", "/audit/v1/public-key")
      .addSuccess(VerifierKey)
      .annotate(
        OpenApi.Description,
        "The verifier key checkpoints are signed with (signed-note: `<origin>+<key id>+<base64 key>`), then a newline."
      )
  )
  .add(
    HttpApiEndpoint.get("consistencyProof", "/audit/v1/proofs/consistency")
      .setUrlParams(ConsistencyParams)
      .addSuccess(ConsistencyProofBody)
      .addError(Errors.BadRequest)
      .annotate(
        OpenApi.Description,
        "The RFC 9162 proof that the tree of `from` leaves is a prefix of the tree of `to` leaves. 400 `TreeSizeOutOfRange` unless 1 ≤ from ≤ to ≤ the tree's size."
      )
  )
  .annotate(OpenApi.Title, "audit")
  .annotate(
    OpenApi.Description,
    "The transparency log: a Merkle tree over the event log (RFC 9162), its signed checkpoints (C2SP tlog-checkpoint) and consistency proofs between them. No key needed: they show sizes and hashes only."
  ) {}

/**
 * The admin side of the audit: inclusion proofs (`Authorization: Bearer <ADMIN_TOKEN>`).
 *
 * @category groups
 */
export class AuditAdminGroup extends HttpApiGroup.make("auditAdmin")
  .add(
    HttpApiEndpoint.get("inclusionProof", "/audit/v1/proofs/inclusion")
      .setUrlParams(InclusionParams)
      .addSuccess(InclusionProofBody)
      .addError(Errors.BadRequest)
      .addError(Errors.NotFound)
      .annotate(
        OpenApi.Description,
        "The RFC 9162 audit path of an event in the tree of `tree_size` leaves (default: the latest checkpoint's). 404 `EventNotFound`, `EventNotInTree` (ask a larger checkpoint) or `CheckpointNotFound` (none signed yet and no tree_size); 400 `TreeSizeOutOfRange`."
      )
  )
  .middleware(Security.Admin)
  .annotate(OpenApi.Title, "admin: audit")
  .annotate(
    OpenApi.Description,
    "Inclusion proofs of events in the transparency log. Admin only: the answer for an event id tells whether the event exists, whichever merchant's it is. `Authorization: Bearer <ADMIN_TOKEN>`."
  ) {}
