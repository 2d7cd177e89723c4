/**
 * What the sweepers' integration suites share (`LinkExpiry.int.test.ts`, `PaymentTimeouts.int.test.ts`):
 * nodes of the server's own composition on the virtual clock running the sweeper under test (polling
 * faster than the server's own), on PGlite or as two nodes on one PostgreSQL database; a merchant to
 * sell with; the admin clock; and a counted retry for what the sweepers record in the background.
 */
import * as EventStore from "@cobro/domain/EventStore"
import { expect } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Schedule from "effect/Schedule"
import { randomBytes } from "node:crypto"
import * as Path from "node:path"
import type * as Config from "../../src/Config.js"
import * as Nodes from "./Nodes.js"
import * as ServerProcess from "./ServerProcess.js"

/** The sweeper a node runs beside the server's workers. */
type Worker = Parameters<typeof Nodes.node>[1]

/** The services of a node with HTTP: what a suite's body runs with. */
export type NodeServices = Layer.Layer.Success<ReturnType<typeof Nodes.nodeWithHttp>>

/**
 * Retries `check` every 100 ms until it passes, at most 600 times (about a minute). Counted, not
 * timed: the clock in context is the virtual one, which jumps when the test advances it.
 */
export const eventually = <A, E, R>(check: Effect.Effect<A, E, R>) =>
  Effect.suspend(() => check).pipe(
    Effect.sandbox,
    Effect.retry(Schedule.intersect(Schedule.spaced("100 millis"), Schedule.recurs(600))),
    Effect.unsandbox
  )

/** The event types of a stream, in order. */
export const streamTypes = (streamId: string) =>
  Effect.flatMap(EventStore.EventStore, (store) => store.readStream(streamId)).pipe(
    Effect.map((events) => events.map((e) => e.type))
  )

/** Waits ({@link eventually}) until the stream `streamId` holds an event of type `type`. */
export const untilRecorded = (streamId: string, type: string) =>
  eventually(
    Effect.flatMap(streamTypes(streamId), (types) =>
      types.includes(type) ? Effect.void : Effect.fail(`${streamId}: no ${type} yet`)
    )
  )

/** A suite of `sweeper` (as the server runs it, polling faster), its nodes' admin token `adminToken`. */
export const suite = (adminToken: string, sweeper: Worker) => {
  const settingsFor = (database: Config.Database, sealingKey: Buffer) =>
    Nodes.settingsFor(database, sealingKey, adminToken)
  const send = Nodes.sender(adminToken)

  /** Runs `body` against one node on PGlite, with HTTP. */
  const onPglite = <A, E>(body: Effect.Effect<A, E, NodeServices>) =>
    Effect.gen(function* () {
      const dataDir = Path.join(yield* ServerProcess.tempDir, "data")
      const settings = settingsFor({ _tag: "Pglite", dataDir }, randomBytes(32))
      return yield* body.pipe(Effect.provide(Nodes.nodeWithHttp(settings, sweeper)))
    }).pipe(Effect.scoped)

  /**
   * Runs `body` against a node with HTTP on a fresh PostgreSQL database, while a second node (its own
   * pool, clock, projections and sweeper) runs on the same database.
   */
  const onTwoPostgresNodes = <A, E>(body: Effect.Effect<A, E, NodeServices>) =>
    Effect.gen(function* () {
      const url = yield* ServerProcess.postgresDatabase
      const dataDir = yield* ServerProcess.tempDir
      const sealingKey = randomBytes(32)
      const database: Config.Database = { _tag: "Postgres", url: Redacted.make(url), dataDir }
      return yield* Effect.gen(function* () {
        yield* Layer.build(Nodes.node(settingsFor(database, sealingKey), sweeper))
        return yield* body
      }).pipe(Effect.provide(Nodes.nodeWithHttp(settingsFor(database, sealingKey), sweeper)))
    }).pipe(Effect.scoped)

  /**
   * A merchant whose link payments take `methods` (between 1,000 and 5,000,000) with a test webhook;
   * returns its test button key.
   */
  const givenMerchant = (methods: ReadonlyArray<string>) =>
    Effect.gen(function* () {
      const created = yield* send("POST", "/admin/v1/merchants", {
        admin: true,
        body: { name: "Café Central" }
      })
      expect(created.status).toBe(201)
      const merchantId: string = created.json.merchant_id
      const bounds = { min: 1000, max: 5000000 }
      const set = yield* send("PUT", `/admin/v1/merchants/${merchantId}/payment-methods`, {
        admin: true,
        body: { link: Object.fromEntries(methods.map((method) => [method, bounds])) }
      })
      expect(set.status).toBe(200)
      const webhook = yield* send("PUT", `/admin/v1/merchants/${merchantId}/webhook`, {
        admin: true,
        body: { url: "https://merchant.example/hook", mode: "test" }
      })
      expect(webhook.status).toBe(200)
      return created.json.keys.payment_button.test.identity_key as string
    })

  /** Advances the node's virtual clock by `seconds`; the node's reply (its `now`). */
  const advance = (seconds: number) =>
    send("POST", "/admin/v1/clock/advance", { admin: true, body: { seconds } }).pipe(
      Effect.tap((r) => expect(r.status).toBe(200))
    )

  return { send, onPglite, onTwoPostgresNodes, givenMerchant, advance }
}
