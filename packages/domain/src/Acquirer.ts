/**
 * The card acquirer port (spec C): authorizes an online card payment. In the sandbox the amounts
 * 555001, 555002, 555020, 555040 and 555042 decide the outcome (see `Payment.sandboxOutcome`).
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { TransactionId } from "./Ids.js"
import { Amount } from "./Money.js"

/** What is sent to the acquirer for authorization. */
export class AuthorizationRequest extends Schema.Class<AuthorizationRequest>("AuthorizationRequest")({
  transactionId: TransactionId,
  currency: Schema.String,
  total: Amount,
  cardNumber: Schema.String,
  sandbox: Schema.Boolean
}) {}

/** The acquirer's answer. */
export const AuthorizationResult = Schema.Union(
  Schema.TaggedStruct("Approved", { approvalNumber: Schema.String, threeDs: Schema.Boolean }),
  Schema.TaggedStruct("Rejected", { reason: Schema.String }),
  Schema.TaggedStruct("ChallengeRequired", {})
)
export type AuthorizationResult = typeof AuthorizationResult.Type

/** The acquirer port. */
export class Acquirer extends Context.Tag("@cobro/domain/Acquirer")<
  Acquirer,
  { readonly authorize: (request: AuthorizationRequest) => Effect.Effect<AuthorizationResult> }
>() {}
