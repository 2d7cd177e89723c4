/**
 * The services Cobro's webhook path runs on in `npm run bench -- webhooks`, for the bench process and
 * its extra dispatcher processes (`DispatcherProcess.ts`) alike: a pool on the bench's database, the
 * store (migrated), the delivery queue, the server's outbox (notifications scheduled with their
 * outcomes), the real transport (loopback allowed as with
 * `COBRO_DEV_WEBHOOKS=1`; https, trusting the receiver's certificate `ca`), the fixtures' test keys
 * and random ids.
 */
import * as IdGenerator from "@cobro/domain/IdGenerator"
import * as KeyVault from "@cobro/domain/KeyVault"
import * as Notifications from "@cobro/domain/Notifications"
import * as Outbox from "@cobro/domain/Outbox"
import * as F from "@cobro/domain/testing/WebhookFixtures"
import * as PgDeliveryQueue from "@cobro/store-pg/PgDeliveryQueue"
import * as PgEventStore from "@cobro/store-pg/PgEventStore"
import * as PostgresClient from "@cobro/store-pg/PostgresClient"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import { randomBytes, randomUUID } from "node:crypto"
import * as HttpTransport from "../src/HttpTransport.js"

/** The test keys of the fixtures: sealed `sealed:<n>` opens to `secret-<n>`. */
const TestVault = Layer.succeed(KeyVault.KeyVault, {
  issue: () => Effect.die("not used"),
  hashIdentityKey: () => {
    throw new Error("not used")
  },
  unseal: (sealed) => Effect.succeed(F.unsealTest(sealed))
})

const RandomIds = Layer.succeed(IdGenerator.IdGenerator, {
  next: (prefix: string) => Effect.sync(() => prefix + randomBytes(12).toString("hex")),
  uuid: Effect.sync(() => randomUUID())
})

/** Cobro's services on the database at `url`, with a pool of `maxConnections`. */
export const layer = (options: {
  readonly url: string
  readonly ca: string
  readonly maxConnections: number
  readonly applicationName: string
}) =>
  Layer.mergeAll(
    PgDeliveryQueue.layer,
    HttpTransport.layer({ dev: true, ca: [options.ca] }),
    TestVault,
    // As the server: a sale's outcome schedules its notification in the same commit.
    Layer.succeed(Outbox.Outbox, Notifications.outbox)
  ).pipe(
    Layer.provideMerge(Layer.merge(PgEventStore.layerMigrated, RandomIds)),
    Layer.provideMerge(
      PostgresClient.layer({
        url: Redacted.make(options.url),
        maxConnections: options.maxConnections,
        applicationName: options.applicationName,
        // Idle connections stay: a server process that ends takes its CPU out of the bench's count.
        idleTimeout: Duration.infinity
      })
    ),
    Layer.orDie
  )
