/**
 * Offline verification of an export against a signed checkpoint (`OfflineVerify`), without a
 * database: random logs verify against their own checkpoints; any rewrite of history below the
 * checkpoint's size — alter, remove, reorder, insert, with every chain recomputed as an insider with
 * write access would — fails on the tree's root; a rewrite without the chains recomputed fails on the
 * chains; a checkpoint of another key, or altered, fails on its signature.
 */
import type * as EventStore from "@cobro/domain/EventStore"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as FastCheck from "effect/FastCheck"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import * as Checkpoint from "../src/Checkpoint.js"
import * as Export from "../src/Export.js"
import * as HashChain from "../src/HashChain.js"
import * as MerkleTree from "../src/MerkleTree.js"
import * as OfflineVerify from "../src/OfflineVerify.js"

const signer = Checkpoint.signer(new Uint8Array(32).fill(7), "cobro.test/offline")
const key = Checkpoint.verifierKeyOf(signer)

/** What an event is before the log places it: its stream and its content. */
interface Draft {
  readonly stream: number
  readonly amount: number
  readonly id: number
}

/** The log an insider would write from drafts: versions and chains computed in order. */
const logOf = (drafts: ReadonlyArray<Draft>): Array<EventStore.RecordedEvent> => {
  const heads = new Map<string, { version: number; hash: string }>()
  return drafts.map((draft, i) => {
    const streamId = `Payment-TRX_${draft.stream}`
    const head = heads.get(streamId) ?? { version: 0, hash: HashChain.genesis }
    const fields = {
      streamId,
      streamVersion: head.version + 1,
      eventId: `00000000-0000-4000-8000-${String(draft.id).padStart(12, "0")}`,
      type: "PaymentApproved",
      schemaVersion: 1,
      data: { _tag: "PaymentApproved", amount: draft.amount },
      metadata: { actor: "api" },
      recordedAt: new Date(Date.UTC(2026, 0, 1, 0, 0, i))
    }
    const hash = HashChain.hashEvent(head.hash, fields)
    heads.set(streamId, { version: fields.streamVersion, hash })
    return { ...fields, globalPosition: BigInt(i + 1), prevHash: head.hash, hash }
  })
}

const checkpointOf = (log: ReadonlyArray<EventStore.RecordedEvent>, size: number) =>
  Checkpoint.signCheckpoint(
    {
      origin: signer.origin,
      size,
      root: MerkleTree.rootOf(log.slice(0, size).map((e) => MerkleTree.leafHash(Buffer.from(e.hash, "hex"))))
    },
    signer.origin,
    signer.seed
  )

const verify = (log: ReadonlyArray<EventStore.RecordedEvent>, note: string, verifierKey = key) =>
  Effect.promise(() => OfflineVerify.verifyLines(log.map(Export.toLine), note, verifierKey))

const tags = (report: OfflineVerify.Report) => report.problems.map((p) => p._tag)

const drafts = FastCheck.array(
  FastCheck.record({ stream: FastCheck.nat(4), amount: FastCheck.integer({ min: 1, max: 10_000_000 }) }),
  { minLength: 1, maxLength: 40 }
).map((list) => list.map((d, id) => ({ ...d, id })))

describe("OfflineVerify", () => {
  it.effect.prop(
    "a log verifies against a checkpoint of any of its prefixes, whatever follows it",
    [drafts, FastCheck.nat()],
    ([list, pick]) =>
      Effect.gen(function* () {
        const log = logOf(list)
        const size = pick % (log.length + 1)
        const report = yield* verify(log, checkpointOf(log, size))
        expect(report.problems).toEqual([])
        expect(report.events).toBe(log.length)
        expect(report.checkpoint?.size).toBe(size)
      })
  )

  it.effect.prop(
    "any rewrite below the checkpoint's size, with every chain recomputed, fails on the tree's root",
    [
      drafts,
      FastCheck.nat(),
      FastCheck.nat(),
      FastCheck.constantFrom("alter", "remove", "reorder", "insert")
    ],
    ([list, a, b, rewrite]) =>
      Effect.gen(function* () {
        const log = logOf(list)
        const size = 1 + (a % log.length)
        const note = checkpointOf(log, size)
        const at = b % size
        const rewritten = [...list]
        if (rewrite === "alter") rewritten[at] = { ...rewritten[at]!, amount: rewritten[at]!.amount + 1 }
        else if (rewrite === "remove") rewritten.splice(at, 1)
        else if (rewrite === "insert") rewritten.splice(at, 0, { stream: 0, amount: 1, id: 999 })
        else {
          const j = at + 1 < size ? at + 1 : at - 1
          if (j < 0) return
          ;[rewritten[at], rewritten[j]] = [rewritten[j]!, rewritten[at]!]
        }
        const forged = logOf(rewritten)
        const report = yield* verify(forged, note)
        // The chains hold (the insider recomputed them): only the signed root tells.
        expect(tags(report).filter((t) => t === "BrokenChain")).toEqual([])
        expect(tags(report).some((t) => t === "RootMismatch" || t === "TooShort")).toBe(true)
      })
  )

  it.effect.prop(
    "an event altered without its chain recomputed fails on the chain",
    [drafts, FastCheck.nat()],
    ([list, a]) =>
      Effect.gen(function* () {
        const log = logOf(list)
        const at = a % log.length
        const altered = log.map((e, i) =>
          i === at ? { ...e, data: { ...(e.data as object), amount: -1 } } : e
        )
        const report = yield* verify(altered, checkpointOf(log, log.length))
        expect(report.problems).toContainEqual(
          OfflineVerify.Problem.BrokenChain({
            found: expect.objectContaining({ _tag: "AlteredEvent", streamId: log[at]!.streamId }) as never
          })
        )
      })
  )

  it.effect(
    "a checkpoint altered, or of another key, or of another origin, is refused before anything else",
    () =>
      Effect.gen(function* () {
        const log = logOf([{ stream: 0, amount: 1, id: 0 }])
        const note = checkpointOf(log, 1)
        const other = Checkpoint.signer(new Uint8Array(32).fill(8), signer.origin)
        const renamed = Checkpoint.signer(signer.seed, "cobro.test/another")
        for (const [checkpoint, verifierKey] of [
          [note.replace("\n1\n", "\n2\n"), key],
          [note, Checkpoint.verifierKeyOf(other)],
          [note, Checkpoint.verifierKeyOf(renamed)],
          [note, "not a key"]
        ] as const) {
          const report = yield* verify(log, checkpoint, verifierKey)
          expect(tags(report)).toEqual(["BadSignature"])
        }
      })
  )

  it.effect("an export shorter than the checkpoint, or with a line that is not an event, is reported", () =>
    Effect.gen(function* () {
      const log = logOf(Array.from({ length: 5 }, (_, id) => ({ stream: id % 2, amount: id + 1, id })))
      const short = yield* verify(log.slice(0, 3), checkpointOf(log, 5))
      expect(short.problems).toEqual([OfflineVerify.Problem.TooShort({ events: 3, size: 5 })])
      const lines = [
        ...log.map(Export.toLine).slice(0, 2),
        "",
        "{not json",
        ...log.map(Export.toLine).slice(2)
      ]
      const report = yield* Effect.promise(() => OfflineVerify.verifyLines(lines, checkpointOf(log, 5), key))
      // The line as the file numbers it (the blank line counts).
      expect(report.problems[0]).toEqual(
        OfflineVerify.Problem.MalformedLine({ line: 4, message: expect.any(String) as never })
      )
      expect(tags(report)).toEqual(["MalformedLine"])
      expect(report.events).toBe(5)
      const altered = log.map((e, i) => (i === 3 ? { ...e, type: "Other" } : e))
      const broken = yield* verify(altered, checkpointOf(log, 5))
      expect(broken.problems.map(OfflineVerify.describe)).toContain(
        `${log[3]!.streamId} version ${log[3]!.streamVersion}: the hash chain breaks (AlteredEvent)`
      )
    })
  )

  it.effect("a file is read in chunks whatever its line lengths, with or without a final newline", () =>
    Effect.gen(function* () {
      const log = logOf(
        Array.from({ length: 300 }, (_, id) => ({ stream: id % 7, amount: id * 1000 + 1, id }))
      )
      const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "cobro-offline-"))
      try {
        const text = log.map(Export.toLine).join("\n")
        for (const [name, content] of [
          ["with-newline.jsonl", `${text}\n`],
          ["without.jsonl", text]
        ] as const) {
          const path = Path.join(dir, name)
          Fs.writeFileSync(path, content)
          const report = yield* OfflineVerify.verifyFile(path, checkpointOf(log, 300), key)
          expect(report.problems).toEqual([])
          expect(report.events).toBe(300)
        }
        const missing = yield* Effect.flip(
          OfflineVerify.verifyFile(Path.join(dir, "none"), checkpointOf(log, 1), key)
        )
        expect(missing.message).toContain("ENOENT")
      } finally {
        Fs.rmSync(dir, { recursive: true, force: true })
      }
    })
  )
})
