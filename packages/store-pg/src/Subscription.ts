/**
 * Catch-up consumers of the whole log: each reads from its checkpoint in commit order and applies a
 * handler in the same transaction that saves its checkpoint (`cobro_checkpoints`), so a crash
 * neither loses nor repeats an event. Wakes on `LogNotifications`, polls as a fallback.
 */
import * as EventStore from "@cobro/domain/EventStore"
import * as SqlClient from "@effect/sql/SqlClient"
import { SqlError } from "@effect/sql/SqlError"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Stream from "effect/Stream"
import * as LogNotifications from "./LogNotifications.js"
import * as PgPool from "./PgPool.js"

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
  /**
   * Which events can make the handlers write; the others are not handed to them. A batch with none
   * of them only moves the checkpoint, with one statement outside any transaction: for consumers
   * that care about a few event types of a log mostly made of others (most read models). Absent:
   * every event is handed over.
   */
  readonly concerns?: (event: EventStore.LoggedEvent) => boolean
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

/** A page of the log read before the transaction that applies it, and where it started. */
interface PreRead {
  readonly after: EventStore.Checkpoint
  readonly events: ReadonlyArray<EventStore.LoggedEvent>
}

/** What one batch did: how many events it went through, and the checkpoint it saved. */
interface Step {
  readonly count: number
  readonly reached: EventStore.Checkpoint | undefined
}

/** Whether checkpoint `a` comes after `b` in commit order. */
const isAfter = (a: EventStore.Checkpoint, b: EventStore.Checkpoint): boolean =>
  a.transactionId > b.transactionId ||
  (a.transactionId === b.transactionId && a.globalPosition > b.globalPosition)

/**
 * One transaction: lock the consumer's checkpoint row, read the next batch after it (or use the page
 * read before, if the checkpoint has not moved since), hand it over (`handleBatch`, or `handle` per
 * event; only the events it `concerns`), save the new checkpoint. Two runners of one consumer
 * serialise on the row lock, so each event is applied once.
 */
const applyPage = <E, R>(
  consumer: Consumer<E, R>,
  options: Options | undefined,
  preRead: PreRead | undefined
): Effect.Effect<Step, E, R | EventStore.EventStore | SqlClient.SqlClient> =>
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
      // The page read before is used only if it starts at the checkpoint: another runner may have
      // moved it on, and a reset may have moved it back.
      const events =
        preRead !== undefined && !isAfter(after, preRead.after) && !isAfter(preRead.after, after)
          ? preRead.events
          : yield* store.readAll({ after, limit: options?.batchSize ?? defaultBatchSize })
      const handed = consumer.concerns === undefined ? events : events.filter(consumer.concerns)
      if (consumer.handleBatch === undefined) {
        for (const event of handed) yield* consumer.handle(event)
      } else if (handed.length > 0) {
        yield* consumer.handleBatch(handed)
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
      return { count: events.length, reached: last?.checkpoint ?? after } satisfies Step
    })
    // Infrastructure failures (the handler's included) are defects; the handler's own errors stay.
    return yield* sql
      .withTransaction(work)
      .pipe(Effect.catchIf((error): error is SqlError => error instanceof SqlError, Effect.die))
  })

/**
 * Moves a consumer's checkpoint from `from` to `to` (one autocommit statement), for a page that
 * concerns the consumer not at all. Only if the saved checkpoint is still at or after `from` and
 * before `to`: a runner that has meanwhile saved a later one keeps it, and a checkpoint moved back
 * (a reset) stays where it was put. Returns whether it moved; if not, the caller reads the saved
 * checkpoint again before its next page.
 */
const advance = (name: string, from: EventStore.Checkpoint, to: EventStore.Checkpoint) =>
  Effect.flatMap(PgPool.statement, (statement) =>
    statement(from.globalPosition === 0n ? advanceFromStartStatement : advanceStatement, [
      name,
      to.transactionId.toString(),
      to.globalPosition.toString(),
      from.transactionId.toString(),
      from.globalPosition.toString()
    ])
  ).pipe(
    Effect.map((rows) => rows.length > 0),
    Effect.orDie
  )

const advanceStatement = `UPDATE cobro_checkpoints
  SET transaction_id = $2::xid8, global_position = $3::bigint, updated_at = now()
  WHERE name = $1 AND (transaction_id, global_position) >= ($4::xid8, $5::bigint)
    AND (transaction_id, global_position) < ($2::xid8, $3::bigint)
  RETURNING 1 AS moved`

// From the start of the log, the consumer may have no checkpoint row yet.
const advanceFromStartStatement = `INSERT INTO cobro_checkpoints (name, transaction_id, global_position)
  VALUES ($1, $2::xid8, $3::bigint)
  ON CONFLICT (name) DO UPDATE SET transaction_id = EXCLUDED.transaction_id,
    global_position = EXCLUDED.global_position, updated_at = now()
  WHERE (cobro_checkpoints.transaction_id, cobro_checkpoints.global_position) >= ($4::xid8, $5::bigint)
    AND (cobro_checkpoints.transaction_id, cobro_checkpoints.global_position)
      < (EXCLUDED.transaction_id, EXCLUDED.global_position)
  RETURNING 1 AS moved`

/**
 * One batch from `from` (the checkpoint this runner saved last; read when unknown). For a consumer
 * with `concerns`, the page is read first, outside a transaction: a page with nothing it concerns
 * only moves the checkpoint (one statement instead of a transaction of five); otherwise it is
 * applied in the checkpoint's transaction as {@link processBatch} does. A `from` that is no longer
 * the saved checkpoint (another runner went further, or a reset moved it back) is found out by
 * either: the move is refused and the next page starts from the saved checkpoint, and the
 * transaction reads from the saved checkpoint.
 */
const step = <E, R>(
  consumer: Consumer<E, R>,
  options: Options | undefined,
  from: EventStore.Checkpoint | undefined
): Effect.Effect<Step, E, R | EventStore.EventStore | SqlClient.SqlClient> =>
  consumer.concerns === undefined
    ? applyPage(consumer, options, undefined)
    : Effect.gen(function* () {
        const store = yield* EventStore.EventStore
        const after = from ?? (yield* checkpoint(consumer.name))
        const events = yield* store.readAll({ after, limit: options?.batchSize ?? defaultBatchSize })
        const last = events[events.length - 1]
        if (last === undefined) return { count: 0, reached: after }
        if (events.some(consumer.concerns!)) return yield* applyPage(consumer, options, { after, events })
        const moved = yield* advance(consumer.name, after, last.checkpoint)
        return { count: events.length, reached: moved ? last.checkpoint : undefined }
      })

/**
 * One transaction: lock the consumer's checkpoint row, read the next batch after it, apply it
 * (`handleBatch`, or `handle` per event; only the events it `concerns`), save the new checkpoint.
 * Returns how many events it went through. Two runners of one consumer serialise on the row lock,
 * so each event is applied once.
 */
export const processBatch = <E, R>(
  consumer: Consumer<E, R>,
  options?: Options
): Effect.Effect<number, E, R | EventStore.EventStore | SqlClient.SqlClient> =>
  Effect.map(applyPage(consumer, options, undefined), (done) => done.count).pipe(
    Effect.withSpan("Subscription.processBatch", { attributes: { consumer: consumer.name } })
  )

/** Batches from `from` until one is short; returns the count and the checkpoint reached. */
const catchUpFrom = <E, R>(
  consumer: Consumer<E, R>,
  options: Options | undefined,
  from: EventStore.Checkpoint | undefined
): Effect.Effect<Step, E, R | EventStore.EventStore | SqlClient.SqlClient> =>
  Effect.gen(function* () {
    const batchSize = options?.batchSize ?? defaultBatchSize
    let total = 0
    let reached = from
    while (true) {
      const done = yield* step(consumer, options, reached).pipe(
        Effect.withSpan("Subscription.processBatch", { attributes: { consumer: consumer.name } })
      )
      total += done.count
      reached = done.reached
      if (done.count < batchSize) return { count: total, reached }
    }
  })

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
  Effect.map(catchUpFrom(consumer, options, undefined), (done) => done.count)

/** The database's own words for a failure (a `SqlError`'s `cause`, which `Cause.pretty` omits), if any. */
const driverMessage = (cause: Cause.Cause<unknown>): string => {
  const message = (Cause.squash(cause) as { cause?: { message?: unknown } } | undefined)?.cause?.message
  return typeof message === "string" ? ` (${message})` : ""
}

/**
 * Runs `catchUp` for ever: at once, then after each wake-up of the log (`LogNotifications`) or
 * `pollInterval`, never sooner than `batchInterval` after the last run: an idle consumer reacts to
 * the next append at once, a busy one lets the events of many appends share a batch. The pauses use
 * wall-clock time, not the Clock in context: a test's virtual clock must not stall consumers.
 *
 * A catch-up that dies (the database unreachable, its connection terminated under a read) is logged
 * with its cause and tried again at the next wake-up or poll: a dropped connection must not stop
 * the consumers for good. Only the handlers' own errors end the loop.
 */
const forEverWoken = <E, R>(
  name: string,
  options: Options | undefined,
  catchUp: Effect.Effect<void, E, R>
): Effect.Effect<never, E, R | LogNotifications.LogNotifications> =>
  Effect.scoped(
    Effect.gen(function* () {
      const notifications = yield* LogNotifications.LogNotifications
      const wake = yield* Queue.sliding<void>(1)
      yield* notifications.appended.pipe(
        Stream.runForEach(() => Queue.offer(wake, undefined)),
        Effect.forkScoped
      )
      const pollInterval = options?.pollInterval ?? Duration.seconds(1)
      const pause = Effect.withClock(
        Effect.sleep(options?.batchInterval ?? defaultBatchInterval),
        Clock.make()
      )
      const attempt = catchUp.pipe(
        Effect.catchAllCause((cause) =>
          Cause.isInterruptedOnly(cause) || Option.isSome(Cause.failureOption(cause))
            ? Effect.failCause(cause)
            : Effect.logWarning(
                `${name}: reading the log failed${driverMessage(cause)}; trying again at the next wake-up`,
                cause
              )
        )
      )
      while (true) {
        yield* Queue.takeAll(wake)
        yield* attempt
        yield* pause
        yield* Queue.take(wake).pipe(Effect.timeoutOption(pollInterval))
      }
    })
  )

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
  Effect.suspend(() => {
    // Where this runner's last batch left the checkpoint: the next reads start there.
    let reached: EventStore.Checkpoint | undefined = undefined
    return forEverWoken(
      `consumer ${consumer.name}`,
      options,
      Effect.map(catchUpFrom(consumer, options, reached), (done) => {
        reached = done.reached
      })
    )
  }).pipe(Effect.withSpan("Subscription.run", { attributes: { consumer: consumer.name } }))

// ---------------------------------------------------------------------------------------------
// Several consumers, one reader of the log
// ---------------------------------------------------------------------------------------------

/** How a group of consumers runs: {@link Options}, and how long a failed consumer rests. */
export interface GroupOptions extends Options {
  /** How long a consumer whose batch failed waits before it tries again; default 5 seconds. */
  readonly retryDelay?: Duration.DurationInput
  /**
   * How long a consumer may go past pages it does not concern before it saves its checkpoint there;
   * default 0 (at once). Meanwhile its runner knows where it is; a restart reads those pages again
   * and skips them again. At a low steady rate of appends this saves one statement per consumer per
   * append; a page it concerns is applied, and its checkpoint saved, at once as always.
   */
  readonly saveSkippedEvery?: Duration.DurationInput
}

/** A consumer of a group, and where this runner's last batch left its checkpoint. */
interface Member<R> {
  readonly consumer: Consumer<unknown, R>
  reached: EventStore.Checkpoint | undefined
  /** The checkpoint as this runner last saved or read it, and when (epoch ms). */
  saved: EventStore.Checkpoint | undefined
  savedAt: number
  /** Epoch ms before which a consumer that failed is left out. */
  restingUntil: number
}

/**
 * The part of a page after `after`: the page is in commit order, so it is a suffix, and it is what a
 * read from `after` would return first.
 */
const pageAfter = (
  events: ReadonlyArray<EventStore.LoggedEvent>,
  after: EventStore.Checkpoint
): ReadonlyArray<EventStore.LoggedEvent> => {
  let i = 0
  while (i < events.length && !isAfter(events[i]!.checkpoint, after)) i++
  return i === 0 ? events : events.slice(i)
}

/**
 * One member's share of a page read for the group: moves its checkpoint past a page it does not
 * concern, else applies the page in its checkpoint's transaction ({@link applyPage}, which reads
 * again if the saved checkpoint is not where the page starts).
 */
const applyShare = <R>(
  member: Member<R>,
  options: GroupOptions | undefined,
  share: PreRead,
  now: number
): Effect.Effect<void, unknown, R | EventStore.EventStore | SqlClient.SqlClient> => {
  const last = share.events[share.events.length - 1]
  const consumer = member.consumer
  const every = Duration.toMillis(Duration.decode(options?.saveSkippedEvery ?? 0))
  if (last === undefined) {
    // Nothing new: a position skipped in memory is saved once its interval has passed, so that an
    // idle log's checkpoints still reach its head.
    const { reached, saved } = member
    if (
      reached === undefined ||
      saved === undefined ||
      !isAfter(reached, saved) ||
      now - member.savedAt < every
    ) {
      return Effect.void
    }
    return Effect.map(advance(consumer.name, saved, reached), (moved) => {
      member.reached = moved ? reached : undefined
      member.saved = member.reached
      member.savedAt = now
    })
  }
  if (consumer.concerns !== undefined && !share.events.some(consumer.concerns)) {
    if (member.saved !== undefined && now - member.savedAt < every) {
      // Skipped in memory; saved later (or read again after a restart).
      member.reached = last.checkpoint
      return Effect.void
    }
    return Effect.map(advance(consumer.name, member.saved ?? share.after, last.checkpoint), (moved) => {
      member.reached = moved ? last.checkpoint : undefined
      member.saved = member.reached
      member.savedAt = now
    })
  }
  return Effect.map(applyPage(consumer, options, share), (done) => {
    member.reached = done.reached
    member.saved = done.reached
    member.savedAt = now
  })
}

/**
 * One step of a group: the log read once from the earliest checkpoint among its members (again
 * from the earliest left out, when a full page ends before some of them), each member handed the
 * part after its own checkpoint, all members applying their part at once (each in its own
 * transaction, as {@link step}). A member whose batch fails is logged and rests for `retryDelay`,
 * then starts again from its saved checkpoint; the others go on. Returns whether a page was full
 * (more may follow at once).
 */
const stepGroup = <R>(
  members: ReadonlyArray<Member<R>>,
  options: GroupOptions | undefined
): Effect.Effect<boolean, never, R | EventStore.EventStore | SqlClient.SqlClient> =>
  Effect.gen(function* () {
    const store = yield* EventStore.EventStore
    const limit = options?.batchSize ?? defaultBatchSize
    const now = yield* Clock.currentTimeMillis
    const active = members.filter((member) => member.restingUntil <= now)
    for (const member of active) {
      if (member.reached === undefined) {
        member.reached = yield* checkpoint(member.consumer.name)
        member.saved = member.reached
        member.savedAt = now
      }
    }
    let pending = [...active].sort((a, b) =>
      isAfter(a.reached!, b.reached!) ? 1 : isAfter(b.reached!, a.reached!) ? -1 : 0
    )
    const shares: Array<readonly [Member<R>, PreRead]> = []
    let full = false
    while (pending.length > 0) {
      const page = yield* store.readAll({ after: pending[0]!.reached!, limit })
      const last = page[page.length - 1]
      // A short page holds everything committed after its start: it serves every member behind its
      // end. A full page serves the members whose checkpoint lies before its last event.
      const served =
        page.length < limit || last === undefined
          ? pending
          : pending.filter((member) => isAfter(last.checkpoint, member.reached!))
      if (page.length >= limit) full = true
      for (const member of served) {
        shares.push([member, { after: member.reached!, events: pageAfter(page, member.reached!) }])
      }
      pending = pending.filter((member) => !served.includes(member))
    }
    const retryDelay = Duration.toMillis(Duration.decode(options?.retryDelay ?? "5 seconds"))
    yield* Effect.forEach(
      shares,
      ([member, share]) =>
        applyShare(member, options, share, now).pipe(
          Effect.catchAllCause((cause) =>
            Cause.isInterruptedOnly(cause)
              ? Effect.failCause(cause)
              : Effect.zipRight(
                  Effect.logError(
                    `consumer ${member.consumer.name} failed; it rests, then starts again`,
                    cause
                  ),
                  Effect.flatMap(Clock.currentTimeMillis, (at) =>
                    Effect.sync(() => {
                      member.restingUntil = at + retryDelay
                      member.reached = undefined
                      member.saved = undefined
                    })
                  )
                )
          ),
          Effect.withSpan("Subscription.processBatch", { attributes: { consumer: member.consumer.name } })
        ),
      { concurrency: "unbounded", discard: true }
    ).pipe(Effect.orDie)
    return full
  })

const makeMembers = <R>(consumers: ReadonlyArray<Consumer<unknown, R>>): Array<Member<R>> =>
  consumers.map((consumer) => ({
    consumer,
    reached: undefined,
    saved: undefined,
    savedAt: 0,
    restingUntil: 0
  }))

/**
 * {@link catchUp} for several consumers with one reader of the log (see {@link runAll}): steps until
 * every page read is short. A consumer whose batch fails is logged and left behind.
 */
export const catchUpAll = <R>(
  consumers: ReadonlyArray<Consumer<unknown, R>>,
  options?: Options
): Effect.Effect<void, never, R | EventStore.EventStore | SqlClient.SqlClient> =>
  Effect.gen(function* () {
    const members = makeMembers(consumers)
    while (yield* stepGroup(members, { ...options, retryDelay: Duration.infinity })) {
      // full pages: more is waiting
    }
  })

/**
 * Runs several consumers for ever with one reader of the log: where they have reached the same
 * checkpoint (the usual case once caught up), each page is read, sent and decoded once for all of
 * them, instead of once per consumer. Each consumer keeps its own checkpoint and transaction, so
 * each still applies every event once, also beside other runners of it on other nodes. A consumer
 * whose batch fails (its handler's error or a defect) is logged and tried again after `retryDelay`
 * from its saved checkpoint, while the others go on; a page read for the group that dies (a dropped
 * connection) is logged and read again at the next wake-up or poll; so this never fails.
 */
export const runAll = <R>(
  consumers: ReadonlyArray<Consumer<unknown, R>>,
  options?: GroupOptions
): Effect.Effect<
  never,
  never,
  R | EventStore.EventStore | SqlClient.SqlClient | LogNotifications.LogNotifications
> =>
  Effect.suspend(() => {
    const members = makeMembers(consumers)
    // The group's consumers rest by wall-clock time too (see `forEverWoken`).
    const stepOnce = Effect.withClock(stepGroup(members, options), Clock.make())
    return forEverWoken(
      "log consumers",
      options,
      Effect.gen(function* () {
        while (yield* stepOnce) {
          // full pages: more is waiting
        }
      })
    )
  }).pipe(Effect.withSpan("Subscription.runAll", { attributes: { consumers: consumers.length } }))
