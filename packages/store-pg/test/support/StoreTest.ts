/**
 * The openings of the store's tests: a suite on the store's services, `storeSuite(database, timeout)`;
 * a body given the store and the connection the suite's database serves,
 * `it.effect("…", withStore(function* ({ store, sql }) { … }))` (a property's body gets the generated
 * values after them); or a body given what a setup makes, `given(merchant, function* (merchantId) { … })`,
 * such as a fresh database of its own, `withDatabase(function* (url) { … })`.
 */
import * as EventStore from "@cobro/domain/EventStore"
import { layer } from "@effect/vitest"
import * as SqlClient from "@effect/sql/SqlClient"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import type { YieldWrap } from "effect/Utils"
import * as Databases from "./Databases.js"

/**
 * A suite on the store's services (with an adapter's over them, as its tests need): `@effect/vitest`'s
 * `layer` without its test services, since the store's clocks and waits are real.
 */
export const storeSuite = <ROut, E>(services: Layer.Layer<ROut, E>, timeout: Duration.DurationInput) =>
  layer(services, { excludeTestServices: true, timeout })

/** What a store test's body starts from. */
export interface Store {
  readonly store: EventStore.EventStore["Type"]
  readonly sql: SqlClient.SqlClient
}

/** A test's body run with the suite's store and connection. */
export const withStore =
  <Args extends ReadonlyArray<unknown>, Eff extends YieldWrap<Effect.Effect<any, any, any>>, A>(
    body: (given: Store, ...args: Args) => Generator<Eff, A, never>
  ) =>
  (...args: Args) =>
    Effect.flatMap(Effect.all({ store: EventStore.EventStore, sql: SqlClient.SqlClient }), (given) =>
      Effect.gen(() => body(given, ...args))
    )

/** A test's body given what `setup` makes for it first: a merchant, a database, … */
export const given =
  <S, SE, SR, Eff extends YieldWrap<Effect.Effect<any, any, any>>, A>(
    setup: Effect.Effect<S, SE, SR>,
    body: (value: S) => Generator<Eff, A, never>
  ) =>
  () =>
    Effect.flatMap(setup, (value) => Effect.gen(() => body(value)))

/** A test's body given the URL of a fresh PostgreSQL database of its own, dropped with the test's scope. */
export const withDatabase = <Eff extends YieldWrap<Effect.Effect<any, any, any>>, A>(
  body: (url: string) => Generator<Eff, A, never>
) => given(Databases.postgresDatabase, body)
