/**
 * The store's side of the auditor's tools (issue 7): the export in pages, the one-pass rebuild of
 * several projections, the walk's progress and the checkpoint check of `Verify` (on PGlite).
 */
import * as EventStore from "@cobro/domain/EventStore"
import { expect, layer } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as FastCheck from "effect/FastCheck"
import * as Stream from "effect/Stream"
import { randomUUID } from "node:crypto"
import * as Export from "../src/Export.js"
import * as Projection from "../src/Projection.js"
import * as Verify from "../src/Verify.js"
import * as Counters from "./support/Counters.js"
import * as Databases from "./support/Databases.js"
import * as Eventually from "./support/Eventually.js"
import { taggedEvent } from "./support/Fixtures.js"
import { withStore } from "./support/StoreTest.js"

/** A counter of the streams `<prefix>-…`, in a table of its own. */
const counter = (prefix: string) => Counters.counter(prefix, `audit_${prefix}`)

layer(Databases.pglite, { excludeTestServices: true })("auditor's tools", (it) => {
  it.effect(
    "an export holds every event once, in commit order, and its streams verify without the database",
    withStore(function* ({ store }) {
      const ids = Array.from({ length: 5 }, () => `Export-${randomUUID()}`)
      for (let round = 0; round < 3; round++) {
        for (const id of ids)
          yield* store.append(
            id,
            [taggedEvent("A", { round }), taggedEvent("B")],
            EventStore.ExpectedVersion.Any()
          )
      }
      yield* Eventually.logVisible
      const all = Chunk.toReadonlyArray(yield* Stream.runCollect(Export.events({ pageSize: 4 })))
      const lines = all.map(Export.toLine)
      const back = lines.map(Export.fromLine)
      const positions = back.map((e) => e.globalPosition)
      expect(new Set(positions).size).toBe(positions.length)
      for (let i = 1; i < all.length; i++) {
        const a = all[i - 1]!.checkpoint
        const b = all[i]!.checkpoint
        expect(
          a.transactionId < b.transactionId ||
            (a.transactionId === b.transactionId && a.globalPosition < b.globalPosition)
        ).toBe(true)
      }
      for (const id of ids) {
        const ofStream = back.filter((e) => e.streamId === id)
        expect(ofStream.length).toBe(6)
        expect(Verify.checkStream(ofStream)).toBeUndefined()
      }
      // An export line altered on disk no longer verifies.
      const first = back.find((e) => e.streamId === ids[0])!
      const altered = back
        .filter((e) => e.streamId === ids[0])
        .map((e) => (e === first ? { ...e, data: { _tag: "A", round: 9 } } : e))
      expect(Verify.checkStream(altered)).toMatchObject({ _tag: "AlteredEvent", streamVersion: 1 })
    })
  )

  it.effect(
    "an export's --since is inclusive and --until exclusive",
    withStore(function* ({ store }) {
      const id = `Window-${randomUUID()}`
      yield* store.append(id, [taggedEvent("A")], EventStore.ExpectedVersion.NoStream())
      yield* Effect.sleep("20 millis")
      yield* store.append(id, [taggedEvent("B")], EventStore.ExpectedVersion.Any())
      yield* Effect.sleep("20 millis")
      yield* store.append(id, [taggedEvent("C")], EventStore.ExpectedVersion.Any())
      yield* Eventually.logVisible
      const stream = yield* store.readStream(id)
      const [, b, c] = stream
      const window = yield* Stream.runCollect(Export.events({ since: b!.recordedAt, until: c!.recordedAt }))
      expect(
        Chunk.toReadonlyArray(window)
          .filter((e) => e.streamId === id)
          .map((e) => e.type)
      ).toEqual(["B"])
    })
  )

  it.effect.prop(
    "rebuildAll gives every projection the rows that incremental catch-up gave it",
    [
      FastCheck.array(
        FastCheck.tuple(FastCheck.integer({ min: 0, max: 3 }), FastCheck.integer({ min: 1, max: 9 })),
        { minLength: 1, maxLength: 15 }
      )
    ],
    withStore(function* ({ store }, [history]) {
      const tag = randomUUID().slice(0, 8)
      const p = counter(`p${tag}`)
      const q = counter(`q${tag}`)
      for (const [stream, amount] of history) {
        const prefix = stream % 2 === 0 ? `p${tag}` : `q${tag}`
        yield* store.append(
          `${prefix}-${stream}`,
          [taggedEvent("Added", { amount })],
          EventStore.ExpectedVersion.Any()
        )
      }
      yield* Eventually.logVisible
      yield* Projection.catchUp(p, { batchSize: 3 })
      yield* Projection.catchUp(q, { batchSize: 3 })
      const before = [yield* Counters.rowsOf(p.name), yield* Counters.rowsOf(q.name)]
      const seen: Array<number> = []
      const replayed = yield* Projection.rebuildAll([p, q], {
        batchSize: 7,
        onProgress: (progress) => Effect.sync(() => seen.push(progress.events))
      })
      expect([yield* Counters.rowsOf(p.name), yield* Counters.rowsOf(q.name)]).toEqual(before)
      expect(replayed).toBeGreaterThanOrEqual(history.length)
      expect(seen[seen.length - 1]).toBe(replayed)
      expect([...seen].sort((a, b) => a - b)).toEqual(seen)
      // Their checkpoints are at the end of the log: a catch-up after the rebuild applies nothing.
      expect(yield* Projection.catchUp(p)).toBe(0)
      expect(yield* Projection.catchUp(q)).toBe(0)
      expect((yield* Verify.verifyCheckpoints).filter((c) => c.name.includes(tag))).toEqual([])
    }),
    { fastCheck: { numRuns: 5 } }
  )

  it.effect(
    "verify reports its progress page by page, and a checkpoint naming an event that is gone",
    withStore(function* ({ store, sql }) {
      const id = `Gone-${randomUUID()}`
      yield* store.append(
        id,
        [taggedEvent("A"), taggedEvent("B"), taggedEvent("C")],
        EventStore.ExpectedVersion.NoStream()
      )
      yield* Eventually.logVisible
      const total = yield* Verify.countEvents
      const seen: Array<number> = []
      const report = yield* Verify.verifyWith({
        pageSize: 2,
        onProgress: (p) => Effect.sync(() => seen.push(p.events))
      })
      expect(report.breaks).toEqual([])
      expect(seen[seen.length - 1]).toBe(report.events)
      expect(report.events).toBe(total)
      const p = counter(`g${randomUUID().slice(0, 8)}`)
      yield* Projection.rebuildAll([p])
      const last = (yield* store.readStream(id))[2]!
      const [checkpoint] = yield* sql<{ global_position: string }>`
        SELECT global_position::text AS global_position FROM cobro_checkpoints WHERE name = ${Projection.checkpointName(p)}`.pipe(
        Effect.orDie
      )
      // Point the checkpoint at this stream's last event, then remove that event.
      yield* sql`UPDATE cobro_checkpoints SET global_position = ${last.globalPosition.toString()}::bigint,
        transaction_id = (SELECT transaction_id FROM cobro_events WHERE global_position = ${last.globalPosition.toString()}::bigint)
        WHERE name = ${Projection.checkpointName(p)}`.pipe(Effect.orDie)
      expect(checkpoint).toBeDefined()
      yield* sql`DELETE FROM cobro_events WHERE global_position = ${last.globalPosition.toString()}::bigint`.pipe(
        Effect.orDie
      )
      const broken = yield* Verify.verify
      expect(broken.checkpoints).toEqual([
        Verify.CheckpointBreak.UnknownPosition({
          name: Projection.checkpointName(p),
          transactionId: broken.checkpoints[0]!.transactionId,
          globalPosition: last.globalPosition
        })
      ])
      expect(broken.breaks.filter((b) => b.streamId === id)).toMatchObject([
        { _tag: "HeadMismatch", headVersion: 3, lastVersion: 2 }
      ])
      // Leave the shared log whole for the other tests.
      yield* sql`DELETE FROM cobro_checkpoints WHERE name = ${Projection.checkpointName(p)}`.pipe(
        Effect.orDie
      )
      yield* sql`DELETE FROM cobro_events WHERE stream_id = ${id}`.pipe(Effect.orDie)
      yield* sql`DELETE FROM cobro_streams WHERE stream_id = ${id}`.pipe(Effect.orDie)
    })
  )
})
