/**
 * The log's stored Merkle tree and signed checkpoints (`PgTransparencyLog`) on PGlite and on real
 * PostgreSQL: every checkpoint's root is the tree hash of the log's first events in catch-up order,
 * proofs from the stored subtrees verify with RFC 9162's verifiers, a transaction that commits late
 * lands after the leaves already placed, and concurrent writers and signers leave every signed root
 * reproducible from the log.
 */
import * as EventStore from "@cobro/domain/EventStore"
import * as TransparencyLog from "@cobro/domain/TransparencyLog"
import { expect } from "@effect/vitest"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Chunk from "effect/Chunk"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import type * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import { randomBytes, randomUUID } from "node:crypto"
import * as Checkpoint from "../src/Checkpoint.js"
import * as Export from "../src/Export.js"
import * as MerkleTree from "../src/MerkleTree.js"
import * as PgTransparencyLog from "../src/PgTransparencyLog.js"
import * as Databases from "./support/Databases.js"
import * as Eventually from "./support/Eventually.js"
import { storeSuite, withStore } from "./support/StoreTest.js"

const signer = Checkpoint.signer(new Uint8Array(randomBytes(32)), "cobro.test/log")

const event = (type: string): EventStore.NewEvent => ({
  eventId: randomUUID(),
  type,
  schemaVersion: 1,
  data: { _tag: type, n: Math.random() },
  metadata: { actor: "test" }
})

/** Appends `count` events spread over a few streams of a fresh prefix. */
const appendSome = (count: number, streams = 3) =>
  Effect.gen(function* () {
    const store = yield* EventStore.EventStore
    const prefix = `Tree-${randomUUID()}`
    for (let i = 0; i < count; i++) {
      yield* store.append(`${prefix}-${i % streams}`, [event(`E${i}`)], EventStore.ExpectedVersion.Any())
    }
  })

/** The log's events in catch-up order (the export's order), and their leaves. */
const logLeaves = Effect.map(Stream.runCollect(Export.events({ pageSize: 50 })), (chunk) => {
  const events = Chunk.toReadonlyArray(chunk)
  return { events, leaves: events.map((e) => PgTransparencyLog.leafOf(e.hash)) }
})

/** Extends the tree until it holds at least `size` leaves (other transactions of the cluster may hold xmin back). */
const extendTo = (size: number) =>
  Eventually.eventually(
    (last) => `a tree of ${size} leaves (it has ${last})`,
    Effect.orDie(PgTransparencyLog.extend(7)),
    (n) => n >= size
  )

const countEvents = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql<{ n: string }>`SELECT count(*)::text AS n FROM cobro_events`.pipe(
    Effect.map((rows) => Number(rows[0]!.n))
  )
).pipe(Effect.orDie)

const opened = (note: string) => {
  const checkpoint = Checkpoint.openWithVerifierKey(note, Checkpoint.verifierKeyOf(signer))
  expect(checkpoint, `a checkpoint signed by the log's key:\n${note}`).toBeDefined()
  return checkpoint!
}

const suite = (name: string, database: Layer.Layer<Databases.StoreServices>) =>
  storeSuite(database, 120_000)(`the transparency log on ${name}`, (it) => {
    it.effect(
      "the latest checkpoint is the largest tree signed, whatever the number of digits of its size",
      () =>
        Effect.gen(function* () {
          yield* appendSome(2)
          const small = yield* Effect.orDie(PgTransparencyLog.sign(signer))
          yield* appendSome(10)
          yield* extendTo(yield* countEvents)
          const large = yield* Effect.orDie(PgTransparencyLog.sign(signer))
          expect(String(large.size).length).toBeGreaterThan(String(small.size).length)
          const latest = yield* Effect.orDie(PgTransparencyLog.latestCheckpoint)
          expect(Option.map(latest, (c) => c.size)).toEqual(Option.some(large.size))
        })
    )

    it.effect("a checkpoint's root is the tree hash of the log's first events in catch-up order", () =>
      Effect.gen(function* () {
        yield* appendSome(23)
        yield* extendTo(yield* countEvents)
        const signed = yield* Effect.orDie(PgTransparencyLog.sign(signer))
        const checkpoint = opened(signed.note)
        expect(checkpoint.size).toBe(signed.size)
        const { leaves } = yield* logLeaves
        expect(leaves.length).toBeGreaterThanOrEqual(checkpoint.size)
        expect(Buffer.from(checkpoint.root).toString("hex")).toBe(
          Buffer.from(MerkleTree.rootOf(leaves.slice(0, checkpoint.size))).toString("hex")
        )
        // Every smaller tree's root, from the stored subtrees, is the reference's too.
        for (let size = 0; size <= checkpoint.size; size++) {
          const root = yield* Effect.orDie(PgTransparencyLog.rootAt(size))
          expect(MerkleTree.equals(root, MerkleTree.rootOf(leaves.slice(0, size)))).toBe(true)
        }
        expect(Option.map(yield* Effect.orDie(PgTransparencyLog.latestCheckpoint), (c) => c.note)).toEqual(
          Option.some(signed.note)
        )
      })
    )

    it.effect("every event's inclusion proof verifies against the signed root; another leaf's does not", () =>
      Effect.gen(function* () {
        yield* appendSome(17, 4)
        yield* extendTo(yield* countEvents)
        const checkpoint = opened((yield* Effect.orDie(PgTransparencyLog.sign(signer))).note)
        const { events, leaves } = yield* logLeaves
        for (let index = 0; index < checkpoint.size; index++) {
          const proof = yield* Effect.orDie(
            PgTransparencyLog.inclusionProof(events[index]!.eventId, checkpoint.size)
          )
          expect(proof.leafIndex).toBe(index)
          expect(proof.eventHash).toBe(events[index]!.hash)
          expect(proof.hashes.map((h) => Buffer.from(h).toString("hex"))).toEqual(
            MerkleTree.inclusionProof(leaves, index, checkpoint.size).map((h) =>
              Buffer.from(h).toString("hex")
            )
          )
          expect(
            MerkleTree.verifyInclusion(index, checkpoint.size, leaves[index]!, proof.hashes, checkpoint.root)
          ).toBe(true)
          const other = leaves[(index + 1) % checkpoint.size]!
          if (!MerkleTree.equals(other, leaves[index]!)) {
            expect(
              MerkleTree.verifyInclusion(index, checkpoint.size, other, proof.hashes, checkpoint.root)
            ).toBe(false)
          }
        }
      })
    )

    it.effect("consistency proofs between every two checkpoints verify", () =>
      Effect.gen(function* () {
        const checkpoints: Array<Checkpoint.Checkpoint> = []
        for (const count of [1, 2, 5, 8, 3]) {
          yield* appendSome(count)
          yield* extendTo(yield* countEvents)
          checkpoints.push(opened((yield* Effect.orDie(PgTransparencyLog.sign(signer))).note))
        }
        for (const a of checkpoints) {
          for (const b of checkpoints) {
            if (a.size === 0 || a.size > b.size) continue
            const proof = yield* Effect.orDie(PgTransparencyLog.consistencyProof(a.size, b.size))
            expect(MerkleTree.verifyConsistency(a.size, b.size, a.root, b.root, proof.hashes)).toBe(true)
          }
        }
      })
    )

    it.effect("proofs refuse unknown events, sizes past the tree and events past the size asked", () =>
      Effect.gen(function* () {
        yield* appendSome(4)
        const size = yield* extendTo(yield* countEvents)
        const { events } = yield* logLeaves
        const unknown = yield* Effect.flip(PgTransparencyLog.inclusionProof(randomUUID(), size))
        expect(unknown._tag).toBe("UnknownEvent")
        const malformed = yield* Effect.flip(PgTransparencyLog.inclusionProof("not-a-uuid", size))
        expect(malformed._tag).toBe("UnknownEvent")
        const past = yield* Effect.flip(PgTransparencyLog.inclusionProof(events[0]!.eventId, size + 1))
        expect(past).toBeInstanceOf(TransparencyLog.SizeOutOfRange)
        const last = events[size - 1]!
        const below = yield* Effect.flip(PgTransparencyLog.inclusionProof(last.eventId, size - 1))
        expect(below).toEqual(
          new TransparencyLog.NotInTreeOfSize({
            eventId: last.eventId,
            leafIndex: size - 1,
            treeSize: size - 1
          })
        )
        for (const [from, to] of [
          [0, size],
          [2, 1],
          [1, size + 1]
        ] as const) {
          const error = yield* Effect.flip(PgTransparencyLog.consistencyProof(from, to))
          expect(error._tag).toBe("SizeOutOfRange")
        }
      })
    )
  })

suite("PGlite", Databases.pglite)
suite("PostgreSQL", Databases.postgres)

storeSuite(Databases.postgres, 180_000)("the transparency log under concurrency on PostgreSQL", (it) => {
  it.effect(
    "a transaction that commits late lands after the leaves already placed, below no checkpoint",
    withStore(function* ({ store, sql }) {
      yield* appendSome(3)
      const before = yield* extendTo(yield* countEvents)
      const early = opened((yield* Effect.orDie(PgTransparencyLog.sign(signer))).note)
      // A writer that holds its transaction open while another commits after it started.
      const started = yield* Deferred.make<void>()
      const release = yield* Deferred.make<void>()
      const slow = yield* Effect.fork(
        sql.withTransaction(
          Effect.gen(function* () {
            yield* store.append(`Late-${randomUUID()}`, [event("Late")], EventStore.ExpectedVersion.Any())
            yield* Deferred.succeed(started, undefined)
            yield* Deferred.await(release)
          })
        )
      )
      yield* Deferred.await(started)
      yield* appendSome(2)
      // Neither the open transaction's event nor the later commit (above the open one's xid) joins yet.
      expect(yield* Effect.orDie(PgTransparencyLog.extend())).toBe(before)
      yield* Deferred.succeed(release, undefined)
      yield* Effect.orDie(Fiber.join(slow))
      const after = yield* extendTo(before + 3)
      const late = opened((yield* Effect.orDie(PgTransparencyLog.sign(signer))).note)
      expect(late.size).toBe(after)
      const { leaves } = yield* logLeaves
      expect(MerkleTree.equals(late.root, MerkleTree.rootOf(leaves.slice(0, late.size)))).toBe(true)
      expect(MerkleTree.equals(early.root, MerkleTree.rootOf(leaves.slice(0, early.size)))).toBe(true)
      const proof = yield* Effect.orDie(PgTransparencyLog.consistencyProof(early.size, late.size))
      expect(MerkleTree.verifyConsistency(early.size, late.size, early.root, late.root, proof.hashes)).toBe(
        true
      )
    })
  )

  it.effect(
    "concurrent writers while two signers sign: every checkpoint's root is reproducible from the log",
    withStore(function* ({ store }) {
      const writers = Effect.forEach(
        Array.from({ length: 8 }, (_, w) => w),
        (w) =>
          Effect.forEach(
            Array.from({ length: 40 }, (_, i) => i),
            (i) =>
              i % 5 === 0
                ? store
                    .appendBatch([
                      {
                        streamId: `Many-${w}-a`,
                        events: [event("A"), event("B")],
                        expected: EventStore.ExpectedVersion.Any()
                      },
                      {
                        streamId: `Many-${w}-b`,
                        events: [event("C")],
                        expected: EventStore.ExpectedVersion.Any()
                      }
                    ])
                    .pipe(Effect.asVoid)
                : store
                    .append(`Many-${w}-${i % 3}`, [event("D")], EventStore.ExpectedVersion.Any())
                    .pipe(Effect.asVoid),
            { discard: true }
          ),
        { concurrency: "unbounded", discard: true }
      )
      const done = yield* Deferred.make<void>()
      const signing = Effect.gen(function* () {
        while (!(yield* Deferred.isDone(done))) {
          yield* Effect.orDie(PgTransparencyLog.extendOnce(13))
          yield* Effect.orDie(PgTransparencyLog.sign(signer, { catchUp: false }))
        }
      })
      const signers = yield* Effect.fork(Effect.all([signing, signing], { concurrency: 2, discard: true }))
      yield* writers
      yield* Deferred.succeed(done, undefined)
      yield* Fiber.join(signers)
      yield* extendTo(yield* countEvents)
      yield* Effect.orDie(PgTransparencyLog.sign(signer))
      const sql = yield* SqlClient.SqlClient
      const notes = yield* Effect.orDie(
        sql<{ note: string }>`SELECT note FROM cobro_tree_checkpoints ORDER BY tree_size`
      )
      expect(notes.length).toBeGreaterThan(2)
      const { leaves } = yield* logLeaves
      const checkpoints = notes.map((row) => opened(row.note))
      for (const checkpoint of checkpoints) {
        expect(
          MerkleTree.equals(checkpoint.root, MerkleTree.rootOf(leaves.slice(0, checkpoint.size))),
          `the root signed at ${checkpoint.size}`
        ).toBe(true)
      }
      for (let i = 1; i < checkpoints.length; i++) {
        const [a, b] = [checkpoints[i - 1]!, checkpoints[i]!]
        if (a.size === 0) continue
        const proof = yield* Effect.orDie(PgTransparencyLog.consistencyProof(a.size, b.size))
        expect(MerkleTree.verifyConsistency(a.size, b.size, a.root, b.root, proof.hashes)).toBe(true)
      }
    })
  )
})
