/**
 * The merchant directory port (spec, Authentication): which merchant, integration and mode an
 * identity key belongs to. The store implements it with a read model of the `Merchant` streams; a
 * rotated key stops resolving as soon as the rotation is recorded.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import * as EventStore from "../kernel/EventStore.js"
import { MerchantId } from "../shared/Ids.js"
import * as Merchant from "./Merchant.js"
import { IdentityKeyHash, Integration, KeyMode } from "./SigningKey.js"

/**
 * What a valid identity key grants: one merchant, one integration, production or test data.
 *
 * @category schemas
 */
export class Credential extends Schema.Class<Credential>("Credential")({
  merchantId: MerchantId,
  integration: Integration,
  mode: KeyMode,
  identityKeyHash: IdentityKeyHash
}) {
  /** Test keys see only sandbox data (spec, Authentication). */
  get sandbox(): boolean {
    return this.mode === "test"
  }
}

/**
 * The merchant directory port.
 *
 * @category services
 */
export class MerchantDirectory extends Context.Tag("@cobro/domain/MerchantDirectory")<
  MerchantDirectory,
  {
    /**
     * The credential of a current (not rotated) identity key. Reads its own writes: a key issued
     * by a command that has returned resolves at once, on every node.
     */
    readonly findByIdentityKey: (hash: IdentityKeyHash) => Effect.Effect<Option.Option<Credential>>
  }
>() {}

/**
 * A directory read from the event log's `Merchant` streams, for tests and the in-memory setup. It
 * keeps the keys it has folded and reads only the events appended since, on every lookup, so it
 * reads its own writes without a projection running.
 *
 * @category layers
 */
export const layerFromLog: Layer.Layer<MerchantDirectory, never, EventStore.EventStore> = Layer.effect(
  MerchantDirectory,
  Effect.gen(function* () {
    const store = yield* EventStore.EventStore
    const decode = Schema.decodeUnknownSync(Merchant.Event)
    const keys = new Map<string, Credential>()
    const cursor = yield* Ref.make(EventStore.Start)
    const lock = yield* Effect.makeSemaphore(1)
    const apply = (merchantId: MerchantId, event: Merchant.Event) => {
      const grant = (integration: Integration, mode: KeyMode, pair: Merchant.KeyPair) =>
        keys.set(
          pair.identityKeyHash,
          new Credential({ merchantId, integration, mode, identityKeyHash: pair.identityKeyHash })
        )
      if (event._tag === "IntegrationActivated") {
        grant(event.integration, "production", event.production)
        grant(event.integration, "test", event.test)
      } else if (event._tag === "KeyRotated") {
        keys.delete(event.revokedIdentityKeyHash)
        grant(event.integration, event.mode, event.keyPair)
      }
    }
    const catchUp = lock.withPermits(1)(
      Effect.gen(function* () {
        for (;;) {
          const after = yield* Ref.get(cursor)
          const page = yield* store.readAll({ after })
          for (const event of page) {
            if (
              event.streamId.startsWith(STREAM_PREFIX) &&
              (event.type === "IntegrationActivated" || event.type === "KeyRotated")
            ) {
              apply(MerchantId.make(event.streamId.slice(STREAM_PREFIX.length)), decode(event.data))
            }
          }
          const last = page[page.length - 1]
          if (last === undefined) return
          yield* Ref.set(cursor, last.checkpoint)
        }
      })
    )
    return {
      findByIdentityKey: (hash) => Effect.map(catchUp, () => Option.fromNullable(keys.get(hash)))
    }
  })
)

const STREAM_PREFIX = `${Merchant.Merchant.name}-`
