/**
 * The auditor's round trip with `cobro` (checkpoints and proofs), run as an auditor runs it, in the
 * test's process (`CliInProcess`: the binary's layers, exit codes and output): keep a signed
 * checkpoint and the log's public key, come back after the log grew, check that the new checkpoint
 * extends the old one, that an event is in the tree, and that an export is the log the checkpoint
 * signs, offline; then what an altered note, another key, an insider's rewritten export and a forged
 * checkpoint make of those checks. One command runs as the real binary, in a process of its own.
 */
import * as Checkpoint from "@cobro/store-pg/Checkpoint"
import * as Export from "@cobro/store-pg/Export"
import * as HashChain from "@cobro/store-pg/HashChain"
import type * as EventStore from "@cobro/domain/EventStore"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { randomBytes, randomUUID } from "node:crypto"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import * as InProcess from "./support/CliInProcess.js"
import * as Cli from "./support/CliProcess.js"

/** Each test runs several commands, each opening the database anew (PGlite in WebAssembly). */
const timeout = 900_000

let dir = ""
let env: Record<string, string> = {}
/** Offline commands: a DATA_DIR that does not exist, so that any use of the database would fail. */
let offline: Record<string, string> = {}
const file = (name: string) => Path.join(dir, name)
let exported: Array<EventStore.RecordedEvent> = []

const run = (args: ReadonlyArray<string>, environment = env) =>
  Effect.runPromise(InProcess.run(args, environment))

const ok = (result: Cli.Result) => {
  expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(0)
  return result
}

/** Exit code `code`, one sentence matching `message` on stderr, never a stack. */
const refused = (result: Cli.Result, code: number, message: RegExp) => {
  expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(code)
  expect(result.stderr).toMatch(message)
  expect(result.stderr).not.toMatch(Cli.stackFrame)
  return result
}

/** `cobro audit verify` of an export against a checkpoint and the log's public key, offline. */
const verifyOffline = (exportFile: string, checkpoint: string) =>
  run(
    ["audit", "verify", "--export", exportFile, "--checkpoint", checkpoint, "--public-key", file("key.pub")],
    offline
  )

const write = (name: string, text: string) => {
  Fs.writeFileSync(file(name), text)
  return file(name)
}

// The auditor's visits: two merchants (three events each), a checkpoint after each, the public key
// and the export of the whole log.
beforeAll(async () => {
  dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "cobro-cli-audit-"))
  env = { DATA_DIR: file("data") }
  offline = { DATA_DIR: file("no-database-here") }
  ok(await run(["merchant", "create", "--name", "Café Sur", "--json"]))
  write("old.note", ok(await run(["audit", "checkpoint"])).stdout)
  ok(await run(["merchant", "create", "--name", "Panadería Norte", "--json"]))
  write("new.note", ok(await run(["audit", "checkpoint"])).stdout)
  write("key.pub", ok(await run(["audit", "public-key"])).stdout)
  const log = ok(await run(["audit", "export"])).stdout
  write("log.jsonl", log)
  exported = log
    .split("\n")
    .filter((line) => line !== "")
    .map(Export.fromLine)
}, timeout)

afterAll(() => {
  if (dir !== "") Fs.rmSync(dir, { recursive: true, force: true })
})

describe("cobro audit: checkpoints and proofs on PGlite", () => {
  it.live(
    "an auditor keeps a checkpoint and the public key, and later checks consistency, an event's inclusion and an export offline",
    () =>
      Effect.promise(async () => {
        const key = Fs.readFileSync(file("key.pub"), "utf8")
        expect(key).toMatch(/^cobro\/[0-9a-f]{16}\+[0-9a-f]{8}\+[A-Za-z0-9+/]{44}\n$/)
        const older = Checkpoint.openWithVerifierKey(Fs.readFileSync(file("old.note"), "utf8"), key)
        const newer = Checkpoint.openWithVerifierKey(Fs.readFileSync(file("new.note"), "utf8"), key)
        expect([older?.size, newer?.size]).toStrictEqual([3, 6])
        expect(exported.length).toBe(6)

        const consistent = ok(
          await run([
            "audit",
            "consistency",
            file("old.note"),
            file("new.note"),
            "--public-key",
            file("key.pub")
          ])
        )
        expect(consistent.stdout).toBe("consistent: the log at 6 extends the log at 3 unchanged\n")

        // The second merchant's first event: in the new checkpoint's tree, after the old one's.
        const event = exported[3]!
        const proved = JSON.parse(
          ok(await run(["audit", "prove", event.eventId, "--checkpoint", file("new.note"), "--json"])).stdout
        )
        expect(proved).toMatchObject({
          ok: true,
          event_id: event.eventId,
          stream: event.streamId,
          version: 1,
          event_hash: event.hash,
          leaf_index: 3,
          tree_size: 6,
          root: Buffer.from(newer!.root).toString("base64")
        })
        expect(proved.hashes.length).toBe(3)

        const verified = ok(await verifyOffline(file("log.jsonl"), file("new.note")))
        expect(verified.stdout).toBe(
          "OK: 6 events in 2 streams; the chains hold and the first 6 events hash to the checkpoint's root\n"
        )
        expect(Fs.existsSync(offline["DATA_DIR"]!)).toBe(false)
      }),
    timeout
  )

  it.live(
    "a checkpoint with one byte changed, another key, and a checkpoint the log's key signed for another tree all fail with exit code 1",
    () =>
      Effect.promise(async () => {
        const note = Fs.readFileSync(file("new.note"), "utf8")
        const rootAt = note.indexOf("\n", note.indexOf("\n") + 1) + 1
        const changed = note.slice(0, rootAt) + (note[rootAt] === "A" ? "B" : "A") + note.slice(rootAt + 1)
        const tampered = write("tampered.note", changed)
        const offlineCheck = await verifyOffline(file("log.jsonl"), tampered)
        refused(offlineCheck, 1, /does not verify/)
        expect(offlineCheck.stdout).toMatch(/^BROKEN the checkpoint is not signed by this public key/m)
        refused(
          await run(["audit", "consistency", file("old.note"), tampered]),
          1,
          new RegExp(`${tampered} is not a checkpoint signed by`)
        )

        // Another log's key (COBRO_CHECKPOINT_KEY and COBRO_LOG_ORIGIN, no database needed).
        // The one command of these suites run by the real binary, in a process of its own: it proves
        // bin/cobro.mjs's wiring (exit code, stdout, stderr) that the in-process runs share the rest of.
        const otherKey = ok(
          await Effect.runPromise(
            Cli.run(["audit", "public-key"], {
              COBRO_CHECKPOINT_KEY: randomBytes(32).toString("hex"),
              COBRO_LOG_ORIGIN: "example.com/other-log"
            })
          )
        )
        expect(otherKey.stderr).toBe("")
        const other = otherKey.stdout
        expect(other).toMatch(/^example\.com\/other-log\+[0-9a-f]{8}\+\S+\n$/)
        refused(
          await run([
            "audit",
            "prove",
            exported[0]!.eventId,
            "--checkpoint",
            file("new.note"),
            "--public-key",
            write("other.pub", other)
          ]),
          1,
          /is not a checkpoint signed by example\.com\/other-log's public key/
        )

        // Checkpoints signed with the log's own key (as a thief of the key would) that the log's tree
        // does not back: one past its size, one of its size with another root.
        const seed = Buffer.from(
          Fs.readFileSync(Path.join(env["DATA_DIR"]!, "checkpoint-key"), "utf8").trim(),
          "hex"
        )
        const signer = Checkpoint.signer(new Uint8Array(seed))
        const forge = (name: string, size: number) =>
          write(
            name,
            Checkpoint.signCheckpoint(
              { origin: signer.origin, size, root: randomBytes(32) },
              signer.origin,
              seed
            )
          )
        refused(
          await run(["audit", "consistency", file("old.note"), forge("past.note", 1000)]),
          1,
          /signs 1000 events, past the 6 in this log's tree now/
        )
        refused(
          await run(["audit", "consistency", file("old.note"), forge("fork.note", 6)]),
          1,
          /^cobro: inconsistent: the log at 6 does not extend the log at 3 unchanged/m
        )
      }),
    timeout
  )

  it.live(
    "an export an insider rewrote (one event's data altered, its stream's chain recomputed) or reordered fails with exit code 1",
    () =>
      Effect.promise(async () => {
        const verifyExport = (name: string, events: ReadonlyArray<EventStore.RecordedEvent>) =>
          verifyOffline(write(name, events.map((e) => `${Export.toLine(e)}\n`).join("")), file("new.note"))

        // The first merchant renamed in its first event, and every hash of its stream made anew.
        const stream = exported[0]!.streamId
        let prevHash = HashChain.genesis
        const rewritten = exported.map((event) => {
          if (event.streamId !== stream) return event
          const data =
            event.streamVersion === 1 ? { ...(event.data as object), name: "Someone Else" } : event.data
          const hash = HashChain.hashEvent(prevHash, { ...event, data })
          const rewrote = { ...event, data, prevHash, hash }
          prevHash = hash
          return rewrote
        })
        const insider = await verifyExport("rewritten.jsonl", rewritten)
        refused(insider, 1, /does not verify/)
        expect(insider.stdout).not.toMatch(/hash chain breaks/)
        expect(insider.stdout).toMatch(
          /^BROKEN the tree hash of the export's first 6 events is \S+, not the checkpoint's \S+: the log was rewritten/m
        )

        // Two events of different streams swapped: each stream's chain holds, the tree's order does not.
        expect(exported[2]!.streamId).not.toBe(exported[3]!.streamId)
        const swapped = [...exported]
        ;[swapped[2], swapped[3]] = [swapped[3]!, swapped[2]!]
        const reordered = await verifyExport("swapped.jsonl", swapped)
        refused(reordered, 1, /does not verify/)
        expect(reordered.stdout).toMatch(/^BROKEN the tree hash of the export's first 6 events/m)
      }),
    timeout
  )

  it.live(
    "an event id not in the log is exit code 1; a malformed one, a missing option or file, checkpoints out of order are exit code 2",
    () =>
      Effect.promise(async () => {
        refused(
          await run(["audit", "prove", randomUUID(), "--checkpoint", file("new.note")]),
          1,
          /is not in the log's tree \(no event of the log has this id\)/
        )
        refused(await run(["audit", "prove", "not-an-id"]), 2, /'not-an-id' is not an event id/)
        refused(
          await run(
            ["audit", "verify", "--export", file("log.jsonl"), "--checkpoint", file("new.note")],
            offline
          ),
          2,
          /--export needs --checkpoint FILE .* and --public-key FILE/
        )
        refused(
          await verifyOffline(file("log.jsonl"), file("missing.note")),
          2,
          new RegExp(`--checkpoint: no file '${file("missing.note")}'`)
        )
        refused(
          await run(["audit", "consistency", file("new.note"), file("old.note")]),
          2,
          /signs 6 events, more than .*'s 3: give the older checkpoint first/
        )
        // No key file in a DATA_DIR the server never started in: the command line does not make one.
        refused(
          await run(["audit", "public-key"], offline),
          2,
          /no checkpoint key in .* \(DATA_DIR\): start the server once there .*, or set COBRO_CHECKPOINT_KEY/
        )
        expect(Fs.existsSync(offline["DATA_DIR"]!)).toBe(false)
      }),
    timeout
  )
})
