/**
 * The dispatcher's services as the webhooks' suites build them: HTTPS that trusts the test
 * receiver's certificate, a vault that only unseals the fixtures' keys, and the delivery queue read
 * from an in-memory log. (The PostgreSQL suites put `PgDeliveryQueue` and a database in its place.)
 */
import * as DeliveryQueue from "@cobro/domain/DeliveryQueue"
import type * as EventStore from "@cobro/domain/EventStore"
import * as IdGenerator from "@cobro/domain/IdGenerator"
import * as InMemoryEventStore from "@cobro/domain/InMemoryEventStore"
import * as KeyVault from "@cobro/domain/KeyVault"
import * as F from "@cobro/domain/testing/WebhookFixtures"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as HttpTransport from "../../src/HttpTransport.js"
import * as R from "./Receiver.js"

/** A vault that unseals the fixtures' signing keys; the dispatcher issues none. */
export const TestVault = Layer.succeed(KeyVault.KeyVault, {
  issue: () => Effect.die("not used"),
  hashIdentityKey: () => {
    throw new Error("not used")
  },
  unseal: (sealed) => Effect.succeed(F.unsealTest(sealed))
})

/** HTTPS to the test receiver (its self-signed certificate trusted, loopback allowed) and the test vault. */
export const transport = Layer.merge(
  HttpTransport.layer({ dev: true, ca: [R.certificate().cert] }),
  TestVault
)

/** The dispatcher's services over the in-memory log, or over `store` (e.g. a counting one). */
export const overLog = (store: Layer.Layer<EventStore.EventStore> = InMemoryEventStore.layer) =>
  Layer.merge(DeliveryQueue.layerFromLog, transport).pipe(
    Layer.provideMerge(Layer.merge(store, IdGenerator.layerSequential))
  )
