/**
 * Fresh names for tests that share one database (a suite's tests, and the suites of one file, share
 * its log): stream ids, events and ids that no other test uses; and the domain's events the read
 * models' tests start from.
 */
import * as EventStore from "@cobro/domain/EventStore"
import * as IdGenerator from "@cobro/domain/IdGenerator"
import { type IntegrationId, MerchantId, TerminalSerial, TransactionId } from "@cobro/domain/Ids"
import { amount } from "@cobro/domain/Money"
import * as TerminalCheckout from "@cobro/domain/TerminalCheckout"
import type * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { randomUUID } from "node:crypto"

let counter = 0
/** A stream id no other test uses. */
export const streamId = (prefix = "test") => `${prefix}-${++counter}-${randomUUID().slice(0, 8)}`

/** A new event with a fresh id. */
export const event = (
  type: string,
  data: unknown = {},
  metadata: EventStore.EventMetadata = {}
): EventStore.NewEvent => ({
  eventId: randomUUID(),
  type,
  schemaVersion: 1,
  data,
  metadata
})

/** A new event whose data is tagged with its type, as the domain's are, recorded by the actor `test`. */
export const taggedEvent = (type: string, data: Record<string, unknown> = {}): EventStore.NewEvent =>
  event(type, { _tag: type, ...data }, { actor: "test" })

/** Random ids for the domain's commands: sequential ones would collide in a shared database. */
export const randomIds: Layer.Layer<IdGenerator.IdGenerator> = Layer.succeed(IdGenerator.IdGenerator, {
  next: (prefix) => Effect.sync(() => `${prefix}${randomUUID().replaceAll("-", "")}`),
  uuid: Effect.sync(() => randomUUID())
})

/**
 * A terminal checkout as A3 records it: COP 11,900 on the SMART_PRO `SN-1`, reference `order-1`; the
 * merchant, the mode and the instant as a test needs them.
 */
export const checkoutCreated = (options: {
  readonly integrationId: IntegrationId
  readonly merchantId: string
  readonly sandbox: boolean
  readonly createdAt: DateTime.Utc
}): TerminalCheckout.CheckoutCreated =>
  new TerminalCheckout.CheckoutCreated({
    integrationId: options.integrationId,
    transactionId: TransactionId.make(`TRX_${options.integrationId.slice(4)}`),
    merchantId: MerchantId.make(options.merchantId),
    sandbox: options.sandbox,
    terminalSerial: TerminalSerial.make("SN-1"),
    terminalModel: "SMART_PRO",
    reference: "order-1",
    amount: new TerminalCheckout.CheckoutAmount({
      currency: "COP",
      total: amount(11_900),
      tip: amount(0),
      taxes: []
    }),
    paymentMethod: "POS",
    userEmail: "seller@shop.example",
    description: Option.none(),
    payer: Option.none(),
    createdAt: options.createdAt
  })

/**
 * Appends `events` (each its type and its encoded data) to `streamId` at the stream's current
 * version, as a command's handler would after deciding them.
 */
export const recordEvents = (
  streamId: string,
  events: ReadonlyArray<{ readonly type: string; readonly data: unknown }>
) =>
  Effect.gen(function* () {
    const store = yield* EventStore.EventStore
    const version = (yield* store.readStream(streamId)).length
    yield* store.append(
      streamId,
      events.map((event) => ({
        eventId: randomUUID(),
        type: event.type,
        schemaVersion: 1,
        data: event.data,
        metadata: {}
      })),
      version === 0 ? EventStore.ExpectedVersion.NoStream() : EventStore.ExpectedVersion.Exact({ version })
    )
  })

const encodeCheckout = Schema.encodeSync(TerminalCheckout.Event)

/** A terminal checkout's event as the store records it: its tag and its encoded data. */
export const checkoutEvent = (event: TerminalCheckout.Event) => ({
  type: event._tag,
  data: encodeCheckout(event)
})
