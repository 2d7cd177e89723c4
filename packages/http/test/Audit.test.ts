/**
 * The audit API (`AuditEndpoints`) over a fake `TransparencyLog` kept in memory: the checkpoints are
 * signed with store-pg's `Checkpoint` and the proofs built with its `MerkleTree`, and every answer is
 * checked the way an auditor checks it, with the verifier's algorithms and the served key.
 */
import { describe, expect, it } from "@effect/vitest"
import * as TransparencyLog from "@cobro/domain/TransparencyLog"
import * as Checkpoint from "@cobro/store-pg/Checkpoint"
import * as MerkleTree from "@cobro/store-pg/MerkleTree"
import { createHash } from "node:crypto"
import * as Effect from "effect/Effect"
import * as FastCheck from "effect/FastCheck"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as TestApp from "./support/TestApp.js"

// ---------------------------------------------------------------------------------------------
// A transparency log in memory
// ---------------------------------------------------------------------------------------------

const signer = Checkpoint.signer(new Uint8Array(32).fill(7), "cobro.test/audit")

interface Leaf {
  readonly eventId: string
  readonly eventHash: string
}

const eventId = (i: number) => `00000000-0000-4000-8000-${i.toString(16).padStart(12, "0")}`

/** The fake: `leaves` events in the tree, checkpoints signed at `signedAt` (sizes, in order). */
const fakeLog = (leaves: number, signedAt: ReadonlyArray<number>) => {
  const events: ReadonlyArray<Leaf> = Array.from({ length: leaves }, (_, i) => ({
    eventId: eventId(i),
    eventHash: createHash("sha256").update(`event ${i}`).digest("hex")
  }))
  const hashes = events.map((e) => MerkleTree.leafHash(Buffer.from(e.eventHash, "hex")))
  const checkpoints = signedAt.map((size): TransparencyLog.SignedCheckpoint => ({
    size,
    note: Checkpoint.signCheckpoint(
      { origin: signer.origin, size, root: MerkleTree.rootOf(hashes.slice(0, size)) },
      signer.origin,
      signer.seed
    ),
    signedAt: new Date("2026-11-21T15:00:00Z")
  }))
  const outOfRange = (message: string) => new TransparencyLog.SizeOutOfRange({ message, treeSize: leaves })
  const layer = Layer.succeed(
    TransparencyLog.TransparencyLog,
    TransparencyLog.TransparencyLog.of({
      verifierKey: Checkpoint.verifierKeyOf(signer),
      treeSize: Effect.succeed(leaves),
      latestCheckpoint: Effect.succeed(Option.fromNullable(checkpoints.at(-1))),
      checkpointAt: (size) => Effect.succeed(Option.fromNullable(checkpoints.find((c) => c.size === size))),
      inclusionProof: (id, treeSize) => {
        if (!(Number.isSafeInteger(treeSize) && treeSize >= 1 && treeSize <= leaves))
          return Effect.fail(outOfRange(`tree_size must be from 1 to ${leaves}`))
        const leafIndex = events.findIndex((e) => e.eventId === id)
        if (leafIndex < 0) return Effect.fail(new TransparencyLog.UnknownEvent({ eventId: id }))
        if (leafIndex >= treeSize)
          return Effect.fail(new TransparencyLog.NotInTreeOfSize({ eventId: id, leafIndex, treeSize }))
        return Effect.succeed({
          eventId: id,
          leafIndex,
          treeSize,
          eventHash: events[leafIndex]!.eventHash,
          hashes: MerkleTree.inclusionProof(hashes, leafIndex, treeSize)
        })
      },
      consistencyProof: (from, to) =>
        Number.isSafeInteger(from) && Number.isSafeInteger(to) && from >= 1 && from <= to && to <= leaves
          ? Effect.succeed({ from, to, hashes: MerkleTree.consistencyProof(hashes, from, to) })
          : Effect.fail(outOfRange(`1 ≤ from ≤ to ≤ ${leaves}`))
    })
  )
  return { events, hashes, checkpoints, layer }
}

/** 16 events in the tree; checkpoints at 1, 5, 8 and 13 (the last three events are in no checkpoint). */
const log = fakeLog(16, [1, 5, 8, 13])
const LATEST = 13

/** The app over a log, shared by a describe block's tests. */
const app = (transparencyLog: Layer.Layer<TransparencyLog.TransparencyLog>) =>
  TestApp.shared({ transparencyLog })

const get = (path: string, options: TestApp.SendOptions = {}) => TestApp.send("GET", path, options)

/** `GET /audit/v1/proofs/consistency?<query>`. */
const consistency = (query: string) => get(`/audit/v1/proofs/consistency?${query}`)

/** Checks a refusal: its status, and its only item's code and field, in the envelope. */
const expectError = (reply: TestApp.Reply, status: number, code: string, field?: string, saying?: string) => {
  expect(reply.status, reply.text).toBe(status)
  expect(reply.headers["content-type"]).toContain("application/json")
  expect(reply.json.payload).toEqual({})
  expect(reply.json.errors[0].code, reply.text).toBe(code)
  if (field === undefined) expect(reply.json.errors[0].field).toBeUndefined()
  else expect(reply.json.errors[0].field, reply.text).toBe(field)
  if (saying !== undefined) expect(reply.json.errors[0].message).toContain(saying)
}

/**
 * Checks that `ask` refuses each query with a 400 `code` on the field named beside it (and a
 * message `saying` that).
 */
const expectEachRefused = (
  ask: (query: string) => Effect.Effect<TestApp.Reply, never, any>,
  refusal: { readonly code: string; readonly saying?: string },
  cases: ReadonlyArray<readonly [query: string, field: string]>
) =>
  Effect.gen(function* () {
    for (const [query, field] of cases) {
      expectError(yield* ask(query), 400, refusal.code, field, refusal.saying)
    }
  })

/** Checks a 200 in `text/plain; charset=utf-8`. */
const expectPlainText = (reply: TestApp.Reply) => {
  expect(reply.status).toBe(200)
  expect(reply.headers["content-type"]).toBe("text/plain; charset=utf-8")
}

const unbase64 = (hashes: ReadonlyArray<string>) =>
  hashes.map((h) => new Uint8Array(Buffer.from(h, "base64")))

/** The root a checkpoint served by the API signs, checked with the key the API serves. */
const servedRoot = (size: number) =>
  Effect.gen(function* () {
    const key = (yield* get("/audit/v1/public-key")).text.trimEnd()
    const note = (yield* get(`/audit/v1/checkpoints/${size}`)).text
    const checkpoint = Checkpoint.openWithVerifierKey(note, key)
    expect(checkpoint?.size).toBe(size)
    return checkpoint!.root
  })

// ---------------------------------------------------------------------------------------------
// Checkpoints and the key
// ---------------------------------------------------------------------------------------------

app(log.layer)("checkpoints and the verifier key", (it) => {
  it.effect(
    "GET /audit/v1/checkpoints/latest answers the last signed note byte for byte, as text/plain; charset=utf-8",
    Effect.fnUntraced(function* () {
      const reply = yield* get("/audit/v1/checkpoints/latest")
      expectPlainText(reply)
      const note = log.checkpoints.at(-1)!.note
      expect(Buffer.from(reply.text, "utf8").equals(Buffer.from(note, "utf8"))).toBe(true)
      expect(Number(reply.headers["content-length"])).toBe(Buffer.byteLength(note, "utf8"))
      expect(note).toContain("\u2014 cobro.test/audit ")
    })
  )

  it.effect(
    "GET /audit/v1/checkpoints/{tree_size} answers the checkpoint signed at exactly that size",
    Effect.fnUntraced(function* () {
      for (const checkpoint of log.checkpoints) {
        const reply = yield* get(`/audit/v1/checkpoints/${checkpoint.size}`)
        expectPlainText(reply)
        expect(reply.text).toBe(checkpoint.note)
      }
    })
  )

  it.effect(
    "a size no checkpoint was signed at is a 404 CheckpointNotFound",
    Effect.fnUntraced(function* () {
      for (const size of [0, 2, 14, 16, 17, 999_999_999_999_999]) {
        expectError(yield* get(`/audit/v1/checkpoints/${size}`), 404, "CheckpointNotFound")
      }
    })
  )

  it.effect(
    "a tree_size that is not a non-negative decimal integer is a 400 ValidationError on tree_size",
    Effect.fnUntraced(function* () {
      for (const bad of ["-1", "abc", "1.5", "05", "1e3", "+3", "0x10", "%205", "9999999999999999", "5%20"]) {
        expectError(yield* get(`/audit/v1/checkpoints/${bad}`), 400, "ValidationError", "tree_size")
      }
    })
  )

  it.effect(
    "GET /audit/v1/public-key answers the verifier key and a newline; it opens every checkpoint",
    Effect.fnUntraced(function* () {
      const reply = yield* get("/audit/v1/public-key")
      expectPlainText(reply)
      expect(reply.text).toBe(`${Checkpoint.verifierKeyOf(signer)}\n`)
      for (const checkpoint of log.checkpoints) {
        const opened = Checkpoint.openWithVerifierKey(checkpoint.note, reply.text.trimEnd())
        expect(opened?.size).toBe(checkpoint.size)
      }
    })
  )

  it.effect(
    "another method on an audit path is a 405 that names GET",
    Effect.fnUntraced(function* () {
      const reply = yield* TestApp.send("POST", "/audit/v1/checkpoints/latest", { body: "{}" })
      expectError(reply, 405, "MethodNotAllowed")
      expect(reply.headers["allow"]).toBe("GET")
    })
  )
})

app(fakeLog(3, []).layer)("before the first checkpoint", (it) => {
  it.effect(
    "GET /audit/v1/checkpoints/latest is a 404 CheckpointNotFound in the envelope",
    Effect.fnUntraced(function* () {
      expectError(yield* get("/audit/v1/checkpoints/latest"), 404, "CheckpointNotFound")
    })
  )

  it.effect(
    "an inclusion proof without tree_size is a 404 CheckpointNotFound; with one, it is answered",
    Effect.fnUntraced(function* () {
      const id = eventId(1)
      expectError(
        yield* get(`/audit/v1/proofs/inclusion?event_id=${id}`, { admin: true }),
        404,
        "CheckpointNotFound"
      )
      const reply = yield* get(`/audit/v1/proofs/inclusion?event_id=${id}&tree_size=3`, { admin: true })
      expect(reply.status, reply.text).toBe(200)
      expect(reply.json.tree_size).toBe(3)
    })
  )
})

// ---------------------------------------------------------------------------------------------
// Consistency proofs
// ---------------------------------------------------------------------------------------------

app(log.layer)("consistency proofs", (it) => {
  it.effect(
    "GET /audit/v1/proofs/consistency between two checkpoints verifies against their signed roots (RFC 9162 2.1.4.2)",
    Effect.fnUntraced(function* () {
      for (const first of log.checkpoints) {
        for (const second of log.checkpoints.filter((c) => c.size >= first.size)) {
          const reply = yield* get(`/audit/v1/proofs/consistency?from=${first.size}&to=${second.size}`)
          expect(reply.status, reply.text).toBe(200)
          expect(reply.headers["content-type"]).toContain("application/json")
          expect(reply.json.from).toBe(first.size)
          expect(reply.json.to).toBe(second.size)
          for (const h of reply.json.hashes) expect(h).toMatch(/^[A-Za-z0-9+/]{43}=$/)
          const proof = unbase64(reply.json.hashes)
          const [firstRoot, secondRoot] = [yield* servedRoot(first.size), yield* servedRoot(second.size)]
          expect(MerkleTree.verifyConsistency(first.size, second.size, firstRoot, secondRoot, proof)).toBe(
            true
          )
          // The proof is of these trees only.
          if (first.size < second.size) {
            expect(MerkleTree.verifyConsistency(first.size, second.size, secondRoot, secondRoot, proof)).toBe(
              false
            )
          }
        }
      }
    })
  )

  it.effect(
    "a consistency proof between sizes no checkpoint signs verifies against the trees' roots",
    Effect.fnUntraced(function* () {
      for (const [from, to] of [
        [3, 7],
        [6, 16],
        [16, 16],
        [1, 16]
      ] as const) {
        const reply = yield* get(`/audit/v1/proofs/consistency?from=${from}&to=${to}`)
        expect(reply.status, reply.text).toBe(200)
        const roots = [
          MerkleTree.rootOf(log.hashes.slice(0, from)),
          MerkleTree.rootOf(log.hashes.slice(0, to))
        ]
        expect(
          MerkleTree.verifyConsistency(from, to, roots[0]!, roots[1]!, unbase64(reply.json.hashes))
        ).toBe(true)
      }
    })
  )

  it.effect(
    "a missing or malformed from or to is a 400 ValidationError naming it",
    Effect.fnUntraced(function* () {
      const cases: ReadonlyArray<readonly [string, string]> = [
        ["to=5", "from"],
        ["from=1", "to"],
        ["from=&to=5", "from"],
        ["from=0&to=5", "from"],
        ["from=-1&to=5", "from"],
        ["from=1.0&to=5", "from"],
        ["from=01&to=5", "from"],
        ["from=x&to=5", "from"],
        ["from=1&to=abc", "to"],
        ["from=1&to=1e1", "to"],
        ["from=1&to=99999999999999999999", "to"],
        ["from=1&from=2&to=5", "from"]
      ]
      for (const [query, field] of cases) {
        const reply = yield* consistency(query)
        expect(reply.status, query).toBe(400)
        expect(reply.json.errors.map((e: { code: string }) => e.code)).toEqual(
          reply.json.errors.map(() => "ValidationError")
        )
        expect(
          reply.json.errors.map((e: { field: string }) => e.field),
          `${query} → ${reply.text}`
        ).toContain(field)
      }
    })
  )

  it.effect(
    "sizes past the tree, or from after to, are a 400 TreeSizeOutOfRange that gives the tree's size",
    Effect.fnUntraced(function* () {
      yield* expectEachRefused(consistency, { code: "TreeSizeOutOfRange", saying: "16" }, [
        ["from=1&to=17", "to"],
        ["from=17&to=20", "to"],
        ["from=9&to=5", "from"]
      ])
    })
  )
})

// ---------------------------------------------------------------------------------------------
// Inclusion proofs
// ---------------------------------------------------------------------------------------------

const inclusion = (query: string, admin = true) => get(`/audit/v1/proofs/inclusion?${query}`, { admin })

app(log.layer)("inclusion proofs", (it) => {
  it.effect(
    "GET /audit/v1/proofs/inclusion needs the admin token: 401 in the envelope without it",
    Effect.fnUntraced(function* () {
      const query = `event_id=${eventId(2)}&tree_size=${LATEST}`
      expectError(yield* inclusion(query, false), 401, "Unauthorized")
      expectError(
        yield* get(`/audit/v1/proofs/inclusion?${query}`, { headers: { authorization: "Bearer wrong" } }),
        401,
        "Unauthorized"
      )
      expectError(
        yield* get(`/audit/v1/proofs/inclusion?event_id=nope`, {
          headers: { authorization: "Bearer wrong" }
        }),
        401,
        "Unauthorized"
      )
    })
  )

  it.effect(
    "every event's inclusion proof verifies against the signed root of each checkpoint that holds it (RFC 9162 2.1.3.2)",
    Effect.fnUntraced(function* () {
      for (const checkpoint of log.checkpoints) {
        const root = yield* servedRoot(checkpoint.size)
        for (let i = 0; i < checkpoint.size; i++) {
          const reply = yield* inclusion(`event_id=${eventId(i)}&tree_size=${checkpoint.size}`)
          expect(reply.status, reply.text).toBe(200)
          const body = reply.json
          expect(body).toMatchObject({ event_id: eventId(i), leaf_index: i, tree_size: checkpoint.size })
          expect(body.event_hash).toBe(log.events[i]!.eventHash)
          const leaf = MerkleTree.leafHash(Buffer.from(body.event_hash, "hex"))
          const proof = unbase64(body.hashes)
          expect(MerkleTree.verifyInclusion(i, checkpoint.size, leaf, proof, root)).toBe(true)
          expect(MerkleTree.verifyInclusion(i, checkpoint.size, leaf, proof, MerkleTree.emptyRoot)).toBe(
            false
          )
        }
      }
    })
  )

  it.effect(
    "without tree_size, the proof is in the latest checkpoint's tree (not the tree's size now)",
    Effect.fnUntraced(function* () {
      const reply = yield* inclusion(`event_id=${eventId(4)}`)
      expect(reply.status, reply.text).toBe(200)
      expect(reply.json.tree_size).toBe(LATEST)
      const leaf = MerkleTree.leafHash(Buffer.from(reply.json.event_hash, "hex"))
      const root = yield* servedRoot(LATEST)
      expect(MerkleTree.verifyInclusion(4, LATEST, leaf, unbase64(reply.json.hashes), root)).toBe(true)
    })
  )

  it.effect(
    "an event the log's tree does not hold is a 404 EventNotFound on event_id",
    Effect.fnUntraced(function* () {
      expectError(yield* inclusion(`event_id=${eventId(999)}`), 404, "EventNotFound", "event_id")
      expectError(yield* inclusion(`event_id=nope&tree_size=5`), 404, "EventNotFound", "event_id")
    })
  )

  it.effect(
    "an event at or past tree_size is a 404 EventNotInTree on tree_size (ask a larger checkpoint); events past the latest checkpoint too",
    Effect.fnUntraced(function* () {
      const reply = yield* inclusion(`event_id=${eventId(5)}&tree_size=5`)
      expectError(reply, 404, "EventNotInTree", "tree_size", "larger checkpoint")
      expectError(yield* inclusion(`event_id=${eventId(14)}`), 404, "EventNotInTree", "tree_size")
    })
  )

  it.effect(
    "a tree_size past the tree's size is a 400 TreeSizeOutOfRange that gives the tree's size",
    Effect.fnUntraced(function* () {
      const reply = yield* inclusion(`event_id=${eventId(1)}&tree_size=17`)
      expectError(reply, 400, "TreeSizeOutOfRange", "tree_size", "16")
    })
  )

  it.effect(
    "a missing event_id or a malformed tree_size is a 400 ValidationError naming it",
    Effect.fnUntraced(function* () {
      yield* expectEachRefused(inclusion, { code: "ValidationError" }, [
        ["tree_size=5", "event_id"],
        ["event_id=", "event_id"],
        ["", "event_id"],
        [`event_id=${eventId(1)}&tree_size=0`, "tree_size"],
        [`event_id=${eventId(1)}&tree_size=`, "tree_size"],
        [`event_id=${eventId(1)}&tree_size=five`, "tree_size"],
        [`event_id=${eventId(1)}&tree_size=-5`, "tree_size"],
        [`event_id=${eventId(1)}&tree_size=5&tree_size=8`, "tree_size"],
        [`event_id=${eventId(1)}&event_id=${eventId(2)}`, "event_id"]
      ])
    })
  )
})

// ---------------------------------------------------------------------------------------------
// Never a 500
// ---------------------------------------------------------------------------------------------

const size = FastCheck.oneof(
  FastCheck.integer({ min: -3, max: 20 }).map(String),
  FastCheck.constantFrom(
    "",
    "0",
    "01",
    "1e3",
    "1.5",
    "9007199254740993",
    "99999999999999999999",
    "x",
    "%",
    "%ZZ"
  ),
  FastCheck.string({ unit: "binary", maxLength: 12 })
)

const value = FastCheck.oneof(
  size,
  FastCheck.integer({ min: 0, max: 20 }).map(eventId),
  FastCheck.string({ unit: "binary", maxLength: 40 })
)

/** A query string: known and unknown keys, known-looking and random values, encoded or raw. */
const query = FastCheck.oneof(
  FastCheck.array(
    FastCheck.tuple(
      FastCheck.oneof(FastCheck.constantFrom("from", "to", "event_id", "tree_size"), FastCheck.string()),
      value,
      FastCheck.boolean()
    ),
    { maxLength: 5 }
  ).map((pairs) =>
    pairs
      .map(([k, v, encode]) =>
        encode ? `${encodeURIComponent(k)}=${encodeURIComponent(v)}` : `${k}=${v.replace(/[#\s]/g, "")}`
      )
      .join("&")
  ),
  FastCheck.string({ unit: "binary", maxLength: 40 }).map(encodeURIComponent)
)

const ERROR_CODES = [
  "ValidationError",
  "TreeSizeOutOfRange",
  "EventNotFound",
  "EventNotInTree",
  "CheckpointNotFound"
]

app(log.layer)("bad input", (it) => {
  it.effect.prop(
    "random query strings to the two proof endpoints answer 200, 400 or 404 in the envelope, never a 500",
    [query, FastCheck.constantFrom("consistency", "inclusion")],
    ([text, proof]) =>
      Effect.gen(function* () {
        const reply = yield* get(`/audit/v1/proofs/${proof}?${text}`, { admin: proof === "inclusion" })
        const what = `${proof}?${text} → ${reply.status} ${reply.text}`
        expect([200, 400, 404], what).toContain(reply.status)
        if (reply.status !== 200) {
          expect(reply.json.errors.length, what).toBeGreaterThan(0)
          for (const e of reply.json.errors) expect(ERROR_CODES, what).toContain(e.code)
        }
      }),
    { fastCheck: { numRuns: 300 }, timeout: 60_000 }
  )
})

describe("the audit API in the OpenAPI document", () => {
  it.live(
    "every audit endpoint is documented: text/plain notes, JSON proofs, the inclusion proof with Bearer",
    TestApp.fresh(function* () {
      const spec = (yield* get("/openapi.json")).json
      for (const path of [
        "/audit/v1/checkpoints/latest",
        "/audit/v1/checkpoints/{tree_size}",
        "/audit/v1/public-key"
      ]) {
        expect(Object.keys(spec.paths[path].get.responses["200"].content), path).toEqual([
          "text/plain; charset=utf-8"
        ])
        expect(spec.paths[path].get.security, path).toEqual([])
      }
      expect(spec.paths["/audit/v1/proofs/consistency"].get.security).toEqual([])
      expect(spec.paths["/audit/v1/proofs/inclusion"].get.security).toEqual([{ bearer: [] }])
      const params = spec.paths["/audit/v1/proofs/inclusion"].get.parameters.map((p: any) => [
        p.name,
        p.required
      ])
      expect(params).toEqual([
        ["event_id", true],
        ["tree_size", false]
      ])
    })
  )
})
