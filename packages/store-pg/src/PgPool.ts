/**
 * The `pg` connection pool under `PgClient`, shared with the store's hot path. An autocommit
 * statement sent through `pg` directly skips `@effect/sql`'s per-statement machinery (span, scope,
 * compile), which is most of the client CPU of a one-event append (`docs/benchmarks.md`); everything
 * else, transactions included, goes through `PgClient` on the same connections.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { SqlError } from "@effect/sql/SqlError"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Pg from "pg"

/** The pool, when the database is a PostgreSQL server (PGlite's single session has none). */
export class PgPool extends Context.Tag("@cobro/store-pg/PgPool")<PgPool, Pg.Pool>() {}

/** Where and how to connect: the subset of `PgClient.PgClientConfig` that Cobro sets. */
export interface PgPoolConfig {
  readonly url?: Redacted.Redacted | undefined
  readonly maxConnections?: number | undefined
  readonly applicationName?: string | undefined
  readonly connectTimeout?: Duration.DurationInput | undefined
  /** How long an idle connection stays open; `pg`'s default (10 s) when unset, for ever when infinite. */
  readonly idleTimeout?: Duration.DurationInput | undefined
}

/** Opens the pool and checks that it connects (within `connectTimeout`, 5 s by default); ends it with the scope. */
export const make = (config: PgPoolConfig) =>
  Effect.gen(function* () {
    const connectTimeout = config.connectTimeout ?? Duration.seconds(5)
    const pool = yield* Effect.acquireRelease(
      Effect.sync(() => {
        const pool = new Pg.Pool({
          connectionString: config.url === undefined ? undefined : Redacted.value(config.url),
          max: config.maxConnections,
          application_name: config.applicationName ?? "cobro",
          // Every statement Cobro sends is a short OLTP one. Without fresh statistics (a table that
          // grew since its last ANALYZE, or a server without autovacuum) the planner's estimates
          // pass `jit_above_cost`, and each execution then spends 50–150 ms compiling a plan that
          // runs in a few (measured on the dispatcher's queue, `docs/benchmarks.md`, Webhooks).
          options: "-c jit=off",
          connectionTimeoutMillis: Duration.toMillis(connectTimeout),
          // `pg-pool` reads 0 as "never close".
          idleTimeoutMillis:
            config.idleTimeout === undefined
              ? undefined
              : Duration.isFinite(Duration.decode(config.idleTimeout))
                ? Math.max(1, Duration.toMillis(config.idleTimeout))
                : 0
        })
        // An idle connection that the server drops emits `error` on the pool; the next query
        // reconnects. Without a listener it would end the process.
        pool.on("error", () => {})
        return pool
      }),
      (pool) => Effect.promise(() => pool.end()).pipe(Effect.timeoutOption(1000), Effect.ignore)
    )
    yield* Effect.tryPromise({
      try: () => pool.query("SELECT 1"),
      catch: (cause) => new SqlError({ cause, message: "PgPool: failed to connect" })
    }).pipe(
      Effect.timeoutFail({
        duration: connectTimeout,
        onTimeout: () =>
          new SqlError({ cause: new Error("timed out"), message: "PgPool: connection timed out" })
      })
    )
    return pool
  })

/** The pool as a service. */
export const layer = (config: PgPoolConfig): Layer.Layer<PgPool, SqlError> =>
  Layer.scoped(PgPool, make(config))

/**
 * One autocommit statement through the pool: its rows, or a `SqlError` whose `cause` is `pg`'s error
 * (with its SQLSTATE `code` and `constraint`, as `PgClient`'s errors carry them). With a `name`, the
 * statement is prepared once per connection under that name and its plan reused (`pg`'s named
 * statements): for hot statements whose planning costs more than their execution.
 */
export const query = <A extends object>(
  pool: Pg.Pool,
  text: string,
  params: ReadonlyArray<unknown>,
  name?: string
): Effect.Effect<ReadonlyArray<A>, SqlError> =>
  Effect.tryPromise({
    try: () =>
      pool
        .query(
          name === undefined
            ? { text, values: params as Array<unknown> }
            : { name, text, values: params as Array<unknown> }
        )
        .then((result) => result.rows as ReadonlyArray<A>),
    catch: (cause) => new SqlError({ cause, message: "PgPool: statement failed" })
  })

/** Runs one statement (`$1`-style parameters) and returns its rows. */
export type Statement = <A extends object>(
  text: string,
  params: ReadonlyArray<unknown>
) => Effect.Effect<ReadonlyArray<A>, SqlError>

/**
 * A runner for single statements that need no transaction: straight through the pool when there is
 * one and no transaction of the caller's is open (the caller's transaction must see its own writes,
 * on its own connection), else through `@effect/sql`.
 */
export const statement: Effect.Effect<Statement, never, SqlClient.SqlClient> = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const found = yield* Effect.serviceOption(PgPool)
  if (Option.isNone(found)) return (text, params) => sql.unsafe(text, params)
  const pool = found.value
  return (text, params) =>
    Effect.flatMap(Effect.serviceOption(SqlClient.TransactionConnection), (transaction) =>
      Option.isSome(transaction) ? sql.unsafe(text, params) : query(pool, text, params)
    )
})
