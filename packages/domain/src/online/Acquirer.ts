/**
 * The card acquirer port (spec C): authorizes an online card payment. In the sandbox the amounts
 * 555001, 555002, 555020, 555040 and 555042 decide the outcome (see `Payment.sandboxOutcome`).
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { TransactionId } from "../shared/Ids.js"
import { Amount } from "../shared/Money.js"
import * as Payment from "./Payment.js"

/**
 * What is sent to the acquirer for authorization.
 *
 * @category schemas
 */
export class AuthorizationRequest extends Schema.Class<AuthorizationRequest>("AuthorizationRequest")({
  transactionId: TransactionId,
  currency: Schema.String,
  total: Amount,
  cardNumber: Schema.String,
  sandbox: Schema.Boolean
}) {}

/**
 * The acquirer's answer.
 *
 * @category schemas
 */
export const AuthorizationResult = Schema.Union(
  Schema.TaggedStruct("Approved", { approvalNumber: Schema.String, threeDs: Schema.Boolean }),
  Schema.TaggedStruct("Rejected", { reason: Schema.String }),
  Schema.TaggedStruct("ChallengeRequired", {})
)
export type AuthorizationResult = typeof AuthorizationResult.Type

/**
 * The acquirer port.
 *
 * @category services
 */
export class Acquirer extends Context.Tag("@cobro/domain/Acquirer")<
  Acquirer,
  { readonly authorize: (request: AuthorizationRequest) => Effect.Effect<AuthorizationResult> }
>() {}

/**
 * A six-digit approval number derived from the transaction id (FNV-1a), so that the simulated
 * acquirer needs no random source and a replayed authorization gives the same number.
 */
export const approvalNumberOf = (transactionId: string): string => {
  let hash = 0x811c9dc5
  for (let i = 0; i < transactionId.length; i++) {
    hash ^= transactionId.charCodeAt(i)
    hash = Math.imul(hash, 0x01000193) >>> 0
  }
  return String(hash % 1_000_000).padStart(6, "0")
}

/**
 * The simulated acquirer Cobro runs, having no card network behind it. A sandbox request is decided
 * by `Payment.sandboxOutcome` of its total (555001, 555002, 555020, 555040, 555042; any other amount
 * approved with no 3DS). A production request is approved with no 3DS whatever its amount: the
 * sandbox amounts have "no effect in production" (spec C), and there is nothing to decline against.
 *
 * @category layers
 */
export const layerSandbox: Layer.Layer<Acquirer> = Layer.succeed(Acquirer, {
  authorize: (request) =>
    Effect.sync((): AuthorizationResult => {
      const outcome: Payment.SandboxOutcome = request.sandbox
        ? Payment.sandboxOutcome(request.total)
        : { _tag: "Approved", threeDs: false }
      switch (outcome._tag) {
        case "Approved":
          return {
            _tag: "Approved",
            approvalNumber: approvalNumberOf(request.transactionId),
            threeDs: outcome.threeDs
          }
        case "Rejected":
          return {
            _tag: "Rejected",
            reason: outcome.by === "3DS" ? "Rejected by 3DS authentication" : "Rejected by the fraud engine"
          }
        case "ChallengeRequired":
          return { _tag: "ChallengeRequired" }
      }
    })
})
