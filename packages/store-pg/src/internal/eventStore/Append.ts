/**
 * The event store's append path. One event to a new stream outside a transaction (the commonest
 * append) is one autocommit statement (prepared on a `pg` pool, `cobro_append_new` elsewhere); every
 * other append is one call of `cobro_append` (lock or create the stream head, check the expected
 * version, link the hash chain, insert): one round trip when no transaction is open, then a wake-up
 * off the caller's path (`WakeUp`); inside a caller's transaction, a savepoint around it and a
 * NOTIFY that its commit delivers. Only a version mismatch or a reused event id costs a second
 * statement (`Refusals`). A batch (`appendBatch`) is one call of `cobro_append_batch` the same way.
 *
 * No span of its own, not `Effect.fn`: the append is the store's hot path, where client CPU is the
 * bottleneck; a span cost about 28 µs of the ~150 µs of client CPU per append (`AppendCost.ts`), a
 * traced function more. The use case's span encloses it.
 * @internal
 */
import * as AppendFence from "@cobro/domain/AppendFence"
import * as EventStore from "@cobro/domain/EventStore"
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as PgErrors from "../../PgErrors.js"
import * as PgPool from "../../PgPool.js"
import * as TraceContext from "../../TraceContext.js"
import * as AppendStatements from "./AppendStatements.js"
import type { Connection } from "./Connection.js"
import * as Refusals from "./Refusals.js"
import type { Signal } from "./WakeUp.js"

type AppendResult<E = Refusals.AppendError> = Effect.Effect<EventStore.AppendResult, E>

/**
 * A statement's parameters and, when a recorded span appends a durable intent (a delivery's schedule
 * or a push's claim, `TraceContext.intentTypes`), its traceparent last: the parameter of the traced
 * statements (`AppendStatements.traced`), whose triggers keep it beside the intent's row (issue 34).
 * Every other append sends the statements it always sent. Within a caller's transaction the setting
 * lasts until its commit: an intent appended later in it with no span active keeps the earlier one's.
 */
const withTraceparent = (params: ReadonlyArray<unknown>, traceparent: string | undefined) =>
  traceparent === undefined ? params : [...params, traceparent]

/** The port's appends over `connection`, signalling each autocommit append to the wake-up path. */
export const make = (
  connection: Connection,
  signal: Signal
): Pick<EventStore.EventStore["Type"], "append" | "appendBatch"> => {
  const { autocommit, sql, statement } = connection

  // One event to a new stream, outside a transaction: the prepared statement on a pool, else the
  // function; with a traceparent, their traced forms (`AppendStatements.traced`).
  const appendNewStatement = Option.match(connection.pool, {
    onNone:
      () =>
      (streamId: string, event: EventStore.NewEvent, recordedAt: Date, traceparent: string | undefined) =>
        statement<AppendStatements.AppendNewRow>(
          traceparent === undefined ? AppendStatements.appendNewStatement : AppendStatements.traced.appendNew,
          withTraceparent(AppendStatements.appendNewParams(streamId, event, recordedAt, false), traceparent)
        ),
    onSome:
      (pool) =>
      (streamId: string, event: EventStore.NewEvent, recordedAt: Date, traceparent: string | undefined) => {
        const prepared =
          traceparent === undefined
            ? AppendStatements.appendNewPrepared
            : AppendStatements.traced.appendNewPrepared
        return PgPool.query<AppendStatements.AppendNewRow>(
          pool,
          prepared.text,
          withTraceparent(AppendStatements.appendNewParams(streamId, event, recordedAt, true), traceparent),
          prepared.name
        )
      }
  })

  /**
   * One event to a new stream, outside a transaction: one autocommit statement. The commonest
   * append, and the benchmark's W1, so it is kept to a few Effect steps.
   */
  const appendNew = (
    streamId: string,
    events: ReadonlyArray<EventStore.NewEvent>,
    expected: EventStore.ExpectedVersion,
    recordedAt: Date,
    traceparent: string | undefined
  ): AppendResult =>
    appendNewStatement(streamId, events[0]!, recordedAt, traceparent).pipe(
      Effect.flatMap((rows): AppendResult<Refusals.AppendError | SqlError> => {
        const position = rows[0]?.position
        if (position === null || position === undefined) {
          // The stream exists: a retry of this event (a no-op) or a conflict.
          return Effect.flatMap(Refusals.currentVersion(sql, streamId), (actual) =>
            Refusals.conflictOrNoop(sql, { streamId, events, expected }, actual)
          )
        }
        signal(streamId)
        const globalPosition = BigInt(position)
        return Effect.succeed({ nextVersion: 1, firstPosition: globalPosition, lastPosition: globalPosition })
      }),
      Effect.catchTag("SqlError", (error) => Refusals.onSqlError(sql, { streamId, events, expected }, error))
    )

  /** Any append of one or more events: one call of `cobro_append`, under a savepoint in a transaction. */
  const appendAny = (
    streamId: string,
    events: ReadonlyArray<EventStore.NewEvent>,
    expected: EventStore.ExpectedVersion,
    recordedAt: Date,
    inTransaction: boolean,
    traceparent: string | undefined
  ): AppendResult => {
    // Inside a caller's transaction, a savepoint keeps a failed append (a reused event id) from
    // aborting it, as the nested transaction of the multi-statement append did; and the NOTIFY
    // must wait for that transaction's commit.
    const params = AppendStatements.appendParams(streamId, events, expected, recordedAt, inTransaction)
    const call = Effect.flatMap(
      (inTransaction ? statement : autocommit)<AppendStatements.AppendRow>(
        traceparent === undefined ? AppendStatements.appendStatement : AppendStatements.traced.append,
        withTraceparent(params, traceparent)
      ),
      (rows): AppendResult<Refusals.AppendError | SqlError> => {
        const row = rows[0]!
        if (row.first_position === null || row.last_position === null) {
          return Refusals.conflictOrNoop(sql, { streamId, events, expected }, row.next_version)
        }
        if (!inTransaction) signal(streamId)
        return Effect.succeed({
          nextVersion: row.next_version,
          firstPosition: BigInt(row.first_position),
          lastPosition: BigInt(row.last_position)
        })
      }
    )
    return (inTransaction ? sql.withTransaction(call) : call).pipe(
      Effect.catchTag("SqlError", (error) => Refusals.onSqlError(sql, { streamId, events, expected }, error))
    )
  }

  /** An append of no events: checks the expected version, writes nothing. */
  const appendNothing = (streamId: string, expected: EventStore.ExpectedVersion) =>
    Effect.flatMap(
      Effect.orDie(Refusals.currentVersion(sql, streamId)),
      (actual): AppendResult<EventStore.ConcurrencyConflict> =>
        expected._tag === "Any" || (expected._tag === "NoStream" ? actual === 0 : expected.version === actual)
          ? Effect.succeed({ nextVersion: actual, firstPosition: 0n, lastPosition: 0n })
          : Effect.fail(Refusals.conflict(streamId, expected, actual))
    )

  const append = (
    streamId: string,
    events: ReadonlyArray<EventStore.NewEvent>,
    expected: EventStore.ExpectedVersion
  ): AppendResult => {
    const normalized =
      expected._tag === "Exact" && expected.version === 0 ? EventStore.ExpectedVersion.NoStream() : expected
    if (events.length === 0) return appendNothing(streamId, expected)
    const written = Effect.flatMap(Effect.context<never>(), (context) =>
      Effect.clockWith((clock) => {
        const transaction = Context.getOption(context, SqlClient.TransactionConnection)
        const traceparent = TraceContext.carriesIntent(events)
          ? TraceContext.traceparentIn(context)
          : undefined
        const recordedAt = new Date(clock.unsafeCurrentTimeMillis())
        return Option.isNone(transaction) && normalized._tag === "NoStream" && events.length === 1
          ? appendNew(streamId, events, normalized, recordedAt, traceparent)
          : appendAny(streamId, events, normalized, recordedAt, Option.isSome(transaction), traceparent)
      })
    )
    return retriedOnce(fenced(streamId, written))
  }

  /**
   * An append once more when its connection broke under it (issue 33: the server became a replica,
   * shut down, or the connection was cut), on a fresh connection (`PgPool` discards the broken
   * one): safe, since its event ids are fixed, so a first attempt that did commit makes the second
   * a no-op. Not inside a caller's transaction, which the broken connection took with it.
   */
  const retriedOnce = <A, E, R>(append: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.catchAllCause(append, (cause) =>
      Effect.flatMap(Effect.serviceOption(SqlClient.TransactionConnection), (transaction) =>
        Option.isNone(transaction) && PgErrors.isConnectionBroken(Cause.squash(cause))
          ? append
          : Effect.failCause(cause)
      )
    )

  /**
   * An append under the fiber's fence (an Idempotency-Key's, which then opens the transaction the
   * append joins); without one, as it is.
   */
  const fenced = <A, E, R>(streamId: string, append: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.flatMap(AppendFence.AppendFence, (fence) =>
      fence === AppendFence.none ? append : fence.around(streamId, append)
    )

  /** How often a batch's replay runs again after PostgreSQL broke a deadlock by rolling it back. */
  const deadlockRetries = 3

  /**
   * The heads a batch writes that exist, locked in stream id order, as `cobro_append_batch` locks
   * them. A guard (an item of no events) is not locked: it is a check, not a write.
   */
  const lockHeads = (items: ReadonlyArray<EventStore.BatchAppend>) => {
    const written = [...new Set(items.filter((item) => item.events.length > 0).map((item) => item.streamId))]
    return written.length === 0
      ? Effect.void
      : Effect.asVoid(
          sql`SELECT 1 FROM cobro_streams WHERE stream_id IN ${sql.in(written)} ORDER BY stream_id FOR UPDATE`
        )
  }

  /**
   * Every item appended in order inside one transaction: the port's definition of a batch. Its heads
   * are locked first, in stream id order: replayed in item order alone, two conflicting batches over
   * the same streams in opposite orders would each hold one head and wait for the other, and one of
   * them would end in a deadlock's defect instead of its conflict. A deadlock still possible (two
   * replays creating the same new streams, whose heads cannot be locked before they exist) rolled
   * the replay back whole, so it is tried again, up to {@link deadlockRetries} times. An append
   * inside it reports the deadlock as a defect (`Refusals.onSqlError`), hence the defect is looked at.
   */
  const appendBatchReference = (
    items: ReadonlyArray<EventStore.BatchAppend>,
    retries = deadlockRetries
  ): Effect.Effect<ReadonlyArray<EventStore.AppendResult>, Refusals.AppendError> =>
    sql
      .withTransaction(
        Effect.zipRight(
          lockHeads(items),
          Effect.forEach(items, (item) => append(item.streamId, item.events, item.expected))
        )
      )
      .pipe(
        Effect.catchTag("SqlError", Effect.die),
        Effect.catchAllDefect((defect) =>
          retries > 0 && PgErrors.isDeadlock(defect)
            ? appendBatchReference(items, retries - 1)
            : Effect.die(defect)
        )
      )

  /**
   * A batch in one statement (`cobro_append_batch`): autocommit outside a transaction, under a
   * savepoint inside one, as `appendAny`. Any failure (a version mismatch, a reused event id, a
   * retry of stored events) rolls it back whole and replays the batch on the reference path, whose
   * appends tell a no-op from a conflict and give the first failing item's error: failures cost two
   * round trips, successes one. An item of no events (an outbox's guard) is a version check in the
   * same statement, without a lock (migration `16_append_batch_guards`); on the reference path it
   * is `append`'s check of no events, unlocked too, so a guard that does not hold stays a conflict
   * on its stream there: it has no events that a retry could have stored.
   */
  const appendBatch = (
    items: ReadonlyArray<EventStore.BatchAppend>
  ): Effect.Effect<ReadonlyArray<EventStore.AppendResult>, Refusals.AppendError> => {
    if (items.length === 0) return Effect.succeed([])
    const writes = items.some((item) => item.events.length > 0)
    return retriedOnce(
      fenced(
        items[0]!.streamId,
        Effect.flatMap(Effect.context<never>(), (context) =>
          Effect.clockWith((clock) => {
            const inTransaction = Option.isSome(Context.getOption(context, SqlClient.TransactionConnection))
            const traceparent = items.some((item) => TraceContext.carriesIntent(item.events))
              ? TraceContext.traceparentIn(context)
              : undefined
            const recordedAt = new Date(clock.unsafeCurrentTimeMillis())
            const params = AppendStatements.appendBatchParams(items, recordedAt, inTransaction)
            const call = Effect.map(
              (inTransaction ? statement : autocommit)<AppendStatements.AppendRow>(
                traceparent === undefined
                  ? AppendStatements.appendBatchStatement
                  : AppendStatements.traced.appendBatch,
                withTraceparent(params, traceparent)
              ),
              (rows) => {
                if (!inTransaction && writes) signal(items[0]!.streamId)
                return rows.map((row): EventStore.AppendResult => ({
                  nextVersion: row.next_version,
                  firstPosition: BigInt(row.first_position!),
                  lastPosition: BigInt(row.last_position!)
                }))
              }
            )
            return (inTransaction ? sql.withTransaction(call) : call).pipe(
              Effect.catchTag("SqlError", () => appendBatchReference(items))
            )
          })
        )
      )
    )
  }

  return { append, appendBatch }
}
