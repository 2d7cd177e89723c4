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
import * as FiberRef from "effect/FiberRef"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Pg from "pg"
import * as PgErrors from "./PgErrors.js"

/** The pool, when the database is a PostgreSQL server (PGlite's single session has none). */
export class PgPool extends Context.Tag("@cobro/store-pg/PgPool")<PgPool, Pg.Pool>() {}

/**
 * How the database's connections are pooled in front of it: `session` (directly, or a pooler in
 * session mode) or `transaction` (pgbouncer's transaction pooling, where a server connection serves
 * one transaction of one client at a time: no named prepared statement can outlive it).
 */
export type PoolMode = "session" | "transaction"

/** Where and how to connect: the subset of `PgClient.PgClientConfig` that Cobro sets. */
export interface PgPoolConfig {
  readonly url?: Redacted.Redacted | undefined
  /** Where LISTEN connects (a transaction-mode pooler cannot carry it); `url` when unset. */
  readonly listenUrl?: Redacted.Redacted | undefined
  readonly maxConnections?: number | undefined
  readonly applicationName?: string | undefined
  /** How long a connection may take to open, and a request may wait for one: 5 s by default. */
  readonly connectTimeout?: Duration.DurationInput | undefined
  /** How long a statement may run before its connection is given up: unbounded when unset. */
  readonly statementTimeout?: Duration.DurationInput | undefined
  /** How long an idle connection stays open; `pg`'s default (10 s) when unset, for ever when infinite. */
  readonly idleTimeout?: Duration.DurationInput | undefined
  /** `session` by default. */
  readonly poolMode?: PoolMode | undefined
}

/**
 * A pool that never hands out a connection known to be of no more use (issue 33). A connection is
 * of no more use when it answered an error that `PgErrors.isConnectionBroken` names (the server is a
 * replica now, shutting down or starting) or its statement timed out; and when one connection
 * says the server changed, every connection opened before it is suspect, since they all went to the
 * same server: they are discarded as they come out of the pool, so that a retry gets a fresh one.
 * Without this, connections to a primary that became a replica stay pooled and answer `25006`
 * until they idle out (19.6 s in the failover).
 */
class FailoverAwarePool extends Pg.Pool {
  /** Bumped each time a connection shows that the server it went to changed. */
  private generation = 0
  private readonly generations = new WeakMap<Pg.PoolClient, number>()
  private readonly broken = new WeakSet<Pg.PoolClient>()

  private readonly configured = new WeakSet<Pg.PoolClient>()

  constructor(
    config: Pg.PoolConfig,
    private readonly namedStatements: boolean
  ) {
    super(config)
    this.on("connect", (client) => {
      this.generations.set(client, this.generation)
      // A connection's error with no statement running (a FATAL `57P01` as the server stops, on a
      // connection being ended or between two statements) is emitted on the client; `pg-pool`
      // listens only while it is idle, and its listener removes itself at the first error. Without
      // a listener of its own the process would end (seen in a switchover under load).
      client.on("error", (error) => this.markBroken(client, PgErrors.isConnectionBroken(error)))
      // `pg` passes every ErrorResponse of the server here before the statement's caller sees it.
      ;(client as unknown as { connection: NodeJS.EventEmitter }).connection.on(
        "errorMessage",
        (message: unknown) => {
          if (PgErrors.isConnectionBroken(message)) this.markBroken(client, true)
        }
      )
      if (!namedStatements) stripStatementNames(client)
    })
  }

  /** A connection found read-only where writes are expected: the server it went to is a replica now. */
  readOnlyFound(client: Pg.PoolClient): void {
    this.markBroken(client, true)
  }

  private markBroken(client: Pg.PoolClient, serverChanged: boolean): void {
    this.broken.add(client)
    if (serverChanged && (this.generations.get(client) ?? 0) >= this.generation) this.generation++
  }

  private stale(client: Pg.PoolClient): boolean {
    return this.broken.has(client) || (this.generations.get(client) ?? 0) < this.generation
  }

  override connect(): Promise<Pg.PoolClient>
  override connect(
    callback: (
      error: Error | undefined,
      client: Pg.PoolClient | undefined,
      done: (release?: unknown) => void
    ) => void
  ): void
  override connect(
    callback?: (
      error: Error | undefined,
      client: Pg.PoolClient | undefined,
      done: (release?: unknown) => void
    ) => void
  ): Promise<Pg.PoolClient> | void {
    if (callback === undefined) {
      return new Promise((resolve, reject) =>
        this.connect((error, client) =>
          error === undefined || error === null ? resolve(client!) : reject(error)
        )
      )
    }
    super.connect((error, client, done) => {
      if (error || client === undefined) return callback(error ?? undefined, client, done)
      if (this.stale(client)) {
        // Released with an error: the pool removes it; a fresh one is made in its place.
        done(true)
        return this.connect(callback)
      }
      // Released with an error when it broke meanwhile, so that the pool removes it too.
      const release = (failure?: unknown) => {
        if (failure !== undefined && failure !== false && PgErrors.isTimeout(failure)) this.broken.add(client)
        done(failure || (this.broken.has(client) ? true : undefined))
      }
      client.release = release
      if (!this.namedStatements || this.configured.has(client)) return callback(undefined, client, release)
      // The database's own setting (migration `17_database_settings`) reaches the sessions opened
      // after it; this one may be older (a new database's first start). A failure costs the setting only.
      this.configured.add(client)
      client.query("SET jit = off", () => callback(undefined, client, release))
    })
  }
}

/**
 * A client whose named statements run unnamed: behind a transaction-mode pooler a statement
 * prepared on one server connection is unknown on the next (`cobro_append_new_1 does not exist`).
 */
const stripStatementNames = (client: Pg.PoolClient): void => {
  const query = client.query.bind(client) as (...args: Array<unknown>) => unknown
  ;(client as unknown as { query: (...args: Array<unknown>) => unknown }).query = (...args) => {
    const [config] = args
    if (typeof config === "object" && config !== null && "name" in config && !("submit" in config)) {
      const { name: _name, ...unnamed } = config as { name?: string }
      return query(unnamed, ...args.slice(1))
    }
    return query(...args)
  }
}

/** Opens the pool and checks that it connects (within `connectTimeout`, 5 s by default); ends it with the scope. */
export const make = (config: PgPoolConfig) =>
  Effect.gen(function* () {
    const connectTimeout = config.connectTimeout ?? Duration.seconds(5)
    const pool = yield* Effect.acquireRelease(
      Effect.sync(() => {
        const pool = new FailoverAwarePool(
          {
            connectionString: config.url === undefined ? undefined : Redacted.value(config.url),
            max: config.maxConnections,
            application_name: config.applicationName ?? "cobro",
            // No other startup parameter: pgbouncer refuses the ones it does not know (`options`,
            // `statement_timeout`). `jit = off` is the database's setting (migration
            // `17_database_settings`) and the statement timeout is kept by the client.
            connectionTimeoutMillis: Duration.toMillis(connectTimeout),
            ...(config.statementTimeout === undefined
              ? {}
              : { query_timeout: Math.max(1, Duration.toMillis(config.statementTimeout)) }),
            // A connection whose server vanished without a word (a failover's old primary behind a
            // proxy) is found by the kernel within about a minute instead of the default two hours.
            keepAlive: true,
            keepAliveInitialDelayMillis: 10_000,
            // `pg-pool` reads 0 as "never close".
            idleTimeoutMillis:
              config.idleTimeout === undefined
                ? undefined
                : Duration.isFinite(Duration.decode(config.idleTimeout))
                  ? Math.max(1, Duration.toMillis(config.idleTimeout))
                  : 0
          },
          (config.poolMode ?? "session") === "session"
        )
        // An idle connection that the server drops emits `error` on the pool; the next query
        // reconnects. Without a listener it would end the process.
        pool.on("error", () => {})
        listenUrls.set(pool, config.listenUrl ?? config.url)
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
    return pool as Pg.Pool
  })

const listenUrls = new WeakMap<Pg.Pool, Redacted.Redacted | undefined>()

/** The connection settings for LISTEN: the pool's, at the listen URL when one was given. */
export const listenConfig = (pool: Pg.Pool): Pg.ClientConfig => {
  const { query_timeout: _timeout, ...options } = pool.options as Pg.ClientConfig
  const url = listenUrls.get(pool)
  return url === undefined ? options : { ...options, connectionString: Redacted.value(url) }
}

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
  traced(
    text,
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
  )

/** A statement's first keyword (`SELECT`, `INSERT`…): its operation, for its span. */
const operationOf = (text: string): string => /^\s*([A-Za-z]+)/.exec(text)?.[1]?.toUpperCase() ?? "QUERY"

/**
 * A statement's span, as `@effect/sql` gives its own (`sql.execute`): its operation and its text
 * with `$n` placeholders, never its values. Nothing is built while tracing is off.
 */
const traced = <A, E>(text: string, statement: Effect.Effect<A, E>): Effect.Effect<A, E> =>
  Effect.withFiberRuntime((fiber) =>
    fiber.getFiberRef(FiberRef.currentTracerEnabled)
      ? Effect.withSpan(statement, "sql.execute", {
          kind: "client",
          captureStackTrace: false,
          attributes: {
            "db.system.name": "postgresql",
            "db.operation.name": operationOf(text),
            "db.query.text": text
          }
        })
      : statement
  )

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

/**
 * Whether the database takes writes now: `transaction_read_only` is off on a pooled connection (a
 * proxy that still sends connections to a primary turned replica shows here, issue 33). A connection
 * found read-only is discarded with every connection opened before it, as one that answered `25006`
 * is: the next check sees a fresh one, so the answer turns as soon as the proxy does.
 */
export const writable = (pool: Pg.Pool): Effect.Effect<boolean, SqlError> =>
  Effect.tryPromise({
    try: async () => {
      const client = await pool.connect()
      let readOnly: boolean
      try {
        const result = await client.query<{ transaction_read_only: string }>("SHOW transaction_read_only")
        readOnly = result.rows[0]?.transaction_read_only !== "off"
      } catch (error) {
        client.release(error as Error)
        throw error
      }
      if (readOnly && pool instanceof FailoverAwarePool) pool.readOnlyFound(client)
      client.release()
      return !readOnly
    },
    catch: (cause) => new SqlError({ cause, message: "PgPool: statement failed" })
  })
