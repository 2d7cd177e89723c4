/**
 * One panel user of a merchant as the operator's API shows it (issue 22,
 * `PATCH /admin/v1/merchants/{merchant_id}/users/{user_id}`): read by id from the user's own stream
 * and folded with the aggregate's `evolve`, so it costs one stream read whatever the log holds. The
 * merchant's list of users is `Listings.users`, over a read model.
 */
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { streamId } from "../kernel/Aggregate.js"
import * as CommandHandler from "../kernel/CommandHandler.js"
import * as EventStore from "../kernel/EventStore.js"
import type * as Listings from "../listings/Listings.js"
import * as PanelUser from "./PanelUser.js"

/**
 * A panel user as shown: the list's row without when it last changed nor its place in the list;
 * never its password hash.
 *
 * @category models
 */
export type Row = Omit<Listings.UserRow, "updatedAt" | "position">

const fromStored = CommandHandler.fromStored(PanelUser.PanelUser)

/**
 * A user's state from its stream's records (none: `Initial`).
 *
 * @category rules
 */
export const stateOf = (records: ReadonlyArray<EventStore.RecordedEvent>): PanelUser.State =>
  fromStored(
    records.map((r) => r.data),
    records.length === 0 ? 0 : records[records.length - 1]!.streamVersion
  ).state

/**
 * The row of an existing user.
 *
 * @category rules
 */
export const rowOf = (user: PanelUser.Existing): Row => ({
  userId: user.userId,
  merchantId: user.merchantId,
  email: user.email,
  role: user.role,
  status: user._tag,
  createdAt: DateTime.toDateUtc(user.createdAt),
  lastSignInAt: Option.getOrNull(Option.map(user.lastSignInAt, DateTime.toDateUtc))
})

const decodeUserId = Schema.decodeUnknownOption(PanelUser.UserId)

/**
 * One user of the merchant as listed: none when the id names no user, or another merchant's (one
 * merchant's operator call never learns of another's users).
 *
 * @category queries
 */
export const find = Effect.fn("PanelUserList.find")(function* (merchantId: string, userId: string) {
  const id = decodeUserId(userId)
  if (Option.isNone(id)) return Option.none<Row>()
  const store = yield* EventStore.EventStore
  const state = stateOf(yield* store.readStream(streamId(PanelUser.PanelUser, id.value)))
  return state._tag !== "Initial" && state.merchantId === merchantId
    ? Option.some(rowOf(state))
    : Option.none()
})
