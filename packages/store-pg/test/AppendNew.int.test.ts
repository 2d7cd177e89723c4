/**
 * The one-event append to a new stream (`cobro_append_new`, migration 4), the store's hot path, on
 * PGlite and on PostgreSQL: the hash it links in SQL is the auditor's recipe, and a retry, a
 * conflict and a reused event id behave as `cobro_append` does.
 */
import * as EventStore from "@cobro/domain/EventStore"
import { expect } from "@effect/vitest"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as FastCheck from "effect/FastCheck"
import type * as Layer from "effect/Layer"
import { randomUUID } from "node:crypto"
import * as HashChain from "../src/HashChain.js"
import * as Rows from "../src/internal/Rows.js"
import * as Verify from "../src/Verify.js"
import * as Databases from "./support/Databases.js"
import { event, streamId } from "./support/Fixtures.js"
import { storeSuite, withStore } from "./support/StoreTest.js"

const { Any, Exact, NoStream } = EventStore.ExpectedVersion

const rowsOf = (id: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql<Rows.EventRow>`SELECT ${sql.literal(Rows.columns)} FROM cobro_events
      WHERE stream_id = ${id} ORDER BY stream_version`
  ).pipe(Effect.orDie)

const headOf = (id: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql<{ version: number; last_hash: string }>`
      SELECT version, last_hash FROM cobro_streams WHERE stream_id = ${id}`
  ).pipe(Effect.orDie)

const suite = (name: string, database: Layer.Layer<Databases.StoreServices>, propRuns: number) =>
  storeSuite(database, "60 seconds")(name, (it) => {
    it.effect.prop(
      "one event to a new stream (cobro_append_new): the hash linked in SQL is the auditor's recipe in JS",
      [
        FastCheck.jsonValue({ stringUnit: "grapheme", maxDepth: 3 }),
        FastCheck.string({ unit: "grapheme", minLength: 1, maxLength: 8 }),
        FastCheck.option(FastCheck.string({ unit: "grapheme", maxLength: 8 }), { nil: undefined }),
        FastCheck.string({ unit: "grapheme", maxLength: 6 })
      ],
      withStore(function* ({ store }, [data, type, actor, suffix]) {
        // PostgreSQL text and jsonb refuse U+0000: such events cannot be stored at all.
        const storable = (value: unknown) => !JSON.stringify(value).includes("\\u0000")
        if (!storable([data, type, actor, suffix])) return
        const id = `${streamId("new")}-ñ😀"\\-${suffix}`
        const sent = event(type, data, actor === undefined ? {} : { actor })
        const result = yield* store.append(id, [sent], NoStream())
        const [row] = yield* rowsOf(id)
        expect(row).toBeDefined()
        expect(result).toEqual({
          nextVersion: 1,
          firstPosition: BigInt(row!.global_position),
          lastPosition: BigInt(row!.global_position)
        })
        const fromInput = HashChain.hashEvent(HashChain.genesis, {
          streamId: id,
          streamVersion: 1,
          eventId: sent.eventId.toLowerCase(),
          type: sent.type,
          schemaVersion: sent.schemaVersion,
          data: HashChain.normalizeJson(sent.data),
          metadata: HashChain.normalizeJson(sent.metadata),
          recordedAt: row!.recorded_at
        })
        expect(row!.stream_version).toBe(1)
        expect(row!.prev_hash).toBe(HashChain.genesis)
        expect(row!.hash).toBe(fromInput)
        expect(HashChain.hashEvent(HashChain.genesis, Rows.toRecorded(row!))).toBe(row!.hash)
        expect(yield* headOf(id)).toEqual([{ version: 1, last_hash: row!.hash }])
        // The chain goes on from it through cobro_append, and verifies.
        yield* store.append(id, [event("Next", { n: 2 })], Exact({ version: 1 }))
        yield* store.append(id, [event("Next", { n: 3 })], Any())
        expect(Verify.checkStream(yield* store.readStream(id))).toBeUndefined()
      }),
      { fastCheck: { numRuns: propRuns } }
    )

    it.effect(
      "one event to a new stream: a retry is a no-op with the original position, another event a ConcurrencyConflict at version 1",
      withStore(function* ({ store }) {
        const id = streamId()
        const sent = event("Opened", { amount: 5 }, { requestId: "r-1" })
        const first = yield* store.append(id, [sent], NoStream())
        expect(yield* store.append(id, [sent], NoStream())).toEqual(first)
        expect(
          yield* store.append(id, [{ ...sent, eventId: sent.eventId.toUpperCase() }], NoStream())
        ).toEqual(first)
        const conflict = yield* Effect.flip(store.append(id, [event("Opened")], NoStream()))
        expect(conflict).toEqual(
          new EventStore.ConcurrencyConflict({ streamId: id, expected: "NoStream", actual: 1 })
        )
        // Exact(0) means NoStream.
        const exactZero = yield* Effect.flip(store.append(id, [event("Opened")], Exact({ version: 0 })))
        expect(exactZero).toMatchObject({ _tag: "ConcurrencyConflict", actual: 1 })
        expect((yield* store.readStream(id)).length).toBe(1)
      })
    )

    it.effect(
      "one event to a new stream: an event id stored elsewhere is EventIdReused, or a no-op if it is the same event there",
      withStore(function* ({ store }) {
        const original = event("A", { amount: 1 })
        const id = streamId()
        const first = yield* store.append(id, [original], NoStream())
        const other = streamId()
        const reused = yield* Effect.flip(store.append(other, [original], NoStream()))
        expect(reused).toEqual(new EventStore.EventIdReused({ eventId: original.eventId }))
        const changed = yield* Effect.flip(
          store.append(id, [{ ...original, data: { amount: 2 } }], NoStream())
        )
        expect(changed).toEqual(new EventStore.EventIdReused({ eventId: original.eventId }))
        expect(yield* store.readStream(other)).toEqual([])
        expect(yield* headOf(other)).toEqual([])
        expect(yield* store.append(id, [original], NoStream())).toEqual(first)
      })
    )

    it.effect(
      "one event to a new stream, 8 concurrent writers: exactly one creates it, the others conflict",
      withStore(function* ({ store }) {
        const id = streamId("race")
        const results = yield* Effect.all(
          Array.from({ length: 8 }, (_, w) =>
            Effect.either(store.append(id, [event("Opened", { w })], NoStream()))
          ),
          { concurrency: "unbounded" }
        )
        const won = results.filter(Either.isRight)
        expect(won.length).toBe(1)
        for (const lost of results.filter(Either.isLeft)) {
          expect(lost.left).toMatchObject({ _tag: "ConcurrencyConflict", streamId: id, actual: 1 })
        }
        const stored = yield* store.readStream(id)
        expect(stored.length).toBe(1)
        expect(BigInt(stored[0]!.globalPosition)).toBe(won[0]!.right.firstPosition)
      })
    )

    it.effect(
      "cobro_append_new returns null and writes nothing when the stream exists",
      withStore(function* ({ store, sql }) {
        const id = streamId()
        yield* store.append(id, [event("A")], NoStream())
        const rows = yield* Effect.orDie(
          sql<{ position: string | null }>`SELECT cobro_append_new(${id}, ${randomUUID()}::uuid, 'B', 1,
            '{}'::jsonb, '{}'::jsonb, now(), '{', '}') AS position`
        )
        expect(rows).toEqual([{ position: null }])
        expect((yield* store.readStream(id)).map((e) => e.type)).toEqual(["A"])
      })
    )
  })

suite("one-event append to a new stream on PGlite", Databases.pglite, 10)
suite("one-event append to a new stream on PostgreSQL", Databases.postgres, 20)
