/**
 * Catch-up consumers of the whole log: each reads from its checkpoint in commit order and applies a
 * handler in the same transaction that saves its checkpoint (`cobro_checkpoints`), so a crash
 * neither loses nor repeats an event. Wakes on `LogNotifications`, polls as a fallback.
 */
import * as EventStore from "@cobro/domain/EventStore"
import * as SqlClient from "@effect/sql/SqlClient"
import { SqlError } from "@effect/sql/SqlError"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"
import * as Stream from "effect/Stream"
import * as LogNotifications from "./LogNotifications.js"

/**
 * A named consumer of the log. Its handlers run inside the transaction that saves the checkpoint:
 * `handleBatch`, when it has one, once per batch read; else `handle` once per event.
 */
export interface Consumer<E = never, R = never> {
  /** Unique among consumers: the key of its checkpoint. */
  readonly name: string
  readonly handle: (event: EventStore.LoggedEvent) => Effect.Effect<void, E, R>
  /**
   * The events of one batch (never empty), in commit order: for consumers whose writes are cheaper
   * together (one `appendBatch` for many streams) than one by one.
   */
  readonly handleBatch?: (events: ReadonlyArray<EventStore.LoggedEvent>) => Effect.Effect<void, E, R>
}

/** Builds a {@link Consumer} that handles one event at a time. */
export const make = <E = never, R = never>(
  name: string,
  handle: (event: EventStore.LoggedEvent) => Effect.Effect<void, E, R>
): Consumer<E, R> => ({ name, handle })

/** Builds a {@link Consumer} that handles each batch at once; its `handle` is a batch of one. */
export const makeBatch = <E = never, R = never>(
  name: string,
  handleBatch: (events: ReadonlyArray<EventStore.LoggedEvent>) => Effect.Effect<void, E, R>
): Consumer<E, R> => ({ name, handle: (event) => handleBatch([event]), handleBatch })

/** How a consumer reads. */
export interface Options {
  /** Events per transaction; default {@link defaultBatchSize}. */
  readonly batchSize?: number
  /** Longest wait between polls when no notification arrives; default 1 second. */
  readonly pollInterval?: Duration.DurationInput
  /**
   * Shortest time between two catch-ups while appends keep coming; default {@link defaultBatchInterval}.
   * Under a steady write load a consumer woken by every append would run a transaction per append;
   * waiting this long lets the events of many appends share one.
   */
  readonly batchInterval?: Duration.DurationInput
}

/** The default `batchSize`: events per transaction. */
export const defaultBatchSize = 500

/** The default `batchInterval`: a bound on how much later a consumer sees an event under load. */
export const defaultBatchInterval: Duration.DurationInput = "25 millis"

/** The saved checkpoint of a consumer (`EventStore.Start` if it never ran). */
export const checkpoint = (name: string): Effect.Effect<EventStore.Checkpoint, never, SqlClient.SqlClient> =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql<{ transaction_id: string; global_position: string }>`
      SELECT transaction_id::text AS transaction_id, global_position FROM cobro_checkpoints WHERE name = ${name}`
  ).pipe(
    Effect.map((rows) => {
      const row = rows[0]
      return row === undefined
        ? EventStore.Start
        : { transactionId: BigInt(row.transaction_id), globalPosition: BigInt(row.global_position) }
    }),
    Effect.orDie
  )

/** Forgets a consumer's checkpoint: it will start over from the beginning of the log. */
export const resetCheckpoint = (name: string): Effect.Effect<void, never, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql`DELETE FROM cobro_checkpoints WHERE name = ${name}`).pipe(
    Effect.asVoid,
    Effect.orDie
  )

/**
 * One transaction: lock the consumer's checkpoint row, read the next batch after it, apply it
 * (`handleBatch`, or `handle` per event), save the new checkpoint. Returns how many events it applied. Two runners of one consumer
 * serialise on the row lock, so each event is applied once.
 */
export const processBatch = <E, R>(
  consumer: Consumer<E, R>,
  options?: Options
): Effect.Effect<number, E, R | EventStore.EventStore | SqlClient.SqlClient> =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const store = yield* EventStore.EventStore
    const work = Effect.gen(function* () {
      const locked = yield* sql<{ transaction_id: string; global_position: string }>`
        INSERT INTO cobro_checkpoints (name, transaction_id, global_position) VALUES (${consumer.name}, '0', 0)
        ON CONFLICT (name) DO UPDATE SET name = EXCLUDED.name
        RETURNING transaction_id::text AS transaction_id, global_position`.pipe(Effect.orDie)
      const row = locked[0]!
      const after = { transactionId: BigInt(row.transaction_id), globalPosition: BigInt(row.global_position) }
      const events = yield* store.readAll({ after, limit: options?.batchSize ?? defaultBatchSize })
      if (consumer.handleBatch === undefined) {
        for (const event of events) yield* consumer.handle(event)
      } else if (events.length > 0) {
        yield* consumer.handleBatch(events)
      }
      const last = events[events.length - 1]
      if (last !== undefined) {
        yield* sql`
          UPDATE cobro_checkpoints
          SET transaction_id = ${last.checkpoint.transactionId.toString()}::xid8,
              global_position = ${last.checkpoint.globalPosition.toString()}::bigint,
              updated_at = now()
          WHERE name = ${consumer.name}`.pipe(Effect.orDie)
      }
      return events.length
    })
    // Infrastructure failures (the handler's included) are defects; the handler's own errors stay.
    return yield* sql
      .withTransaction(work)
      .pipe(Effect.catchIf((error): error is SqlError => error instanceof SqlError, Effect.die))
  }).pipe(Effect.withSpan("Subscription.processBatch", { attributes: { consumer: consumer.name } }))

/**
 * Applies batches until the consumer has seen everything committed below the snapshot; returns the
 * count. A batch shorter than `batchSize` read everything its snapshot showed: no empty batch
 * follows to say so (it would be a transaction of four statements for nothing, per consumer and
 * per wake-up).
 */
export const catchUp = <E, R>(
  consumer: Consumer<E, R>,
  options?: Options
): Effect.Effect<number, E, R | EventStore.EventStore | SqlClient.SqlClient> =>
  Effect.gen(function* () {
    const batchSize = options?.batchSize ?? defaultBatchSize
    let total = 0
    while (true) {
      const applied = yield* processBatch(consumer, options)
      total += applied
      if (applied < batchSize) return total
    }
  })

/**
 * Runs a consumer for ever: catch up, then sleep until a notification or the poll interval, repeat.
 * Fails only with the handler's error.
 */
export const run = <E, R>(
  consumer: Consumer<E, R>,
  options?: Options
): Effect.Effect<
  never,
  E,
  R | EventStore.EventStore | SqlClient.SqlClient | LogNotifications.LogNotifications
> =>
  Effect.scoped(
    Effect.gen(function* () {
      const notifications = yield* LogNotifications.LogNotifications
      const wake = yield* Queue.sliding<void>(1)
      yield* notifications.appended.pipe(
        Stream.runForEach(() => Queue.offer(wake, undefined)),
        Effect.forkScoped
      )
      const pollInterval = options?.pollInterval ?? Duration.seconds(1)
      // Wall-clock time, not the Clock in context: a test's virtual clock must not stall consumers.
      const pause = Effect.withClock(
        Effect.sleep(options?.batchInterval ?? defaultBatchInterval),
        Clock.make()
      )
      while (true) {
        yield* Queue.takeAll(wake)
        yield* catchUp(consumer, options)
        // An idle consumer reacts to the next append at once; a busy one waits before running again.
        yield* pause
        yield* Queue.take(wake).pipe(Effect.timeoutOption(pollInterval))
      }
    })
  ).pipe(Effect.withSpan("Subscription.run", { attributes: { consumer: consumer.name } }))
