/**
 * The name of the merchant account a panel session is in, which every page of a signed-in user shows
 * (issue 31, item 12). A merchant's name is set once, by `MerchantCreated`, and never changes: a
 * state this process already holds answers without reading the log (`CommandHandler.loadKnown`);
 * otherwise the merchant's stream is read once and kept.
 */
import * as CommandHandler from "@cobro/domain/CommandHandler"
import * as Merchant from "@cobro/domain/Merchant"
import * as Effect from "effect/Effect"

const loadKnown = CommandHandler.loadKnown(Merchant.Merchant)

/** The merchant's name (its id, should the account not exist: a session names an existing one). */
export const of = (merchantId: string) =>
  Effect.map(loadKnown(merchantId), ({ state }) => (state._tag === "Initial" ? merchantId : state.name))
