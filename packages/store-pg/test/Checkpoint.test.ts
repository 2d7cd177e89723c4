/**
 * Signed checkpoints (`Checkpoint`): the C2SP signed-note format checked against the reference
 * vector of Go's `golang.org/x/mod/sumdb/note` (Ed25519 is deterministic, so signing with its key
 * must give its note byte for byte), and checkpoints round-tripped and refused when altered.
 */
import { describe, expect, it } from "@effect/vitest"
import * as FastCheck from "effect/FastCheck"
import { randomBytes } from "node:crypto"
import * as C from "../src/Checkpoint.js"

// golang.org/x/mod/sumdb/note's example: its signer and verifier keys, text and signed note.
const GO_SIGNER = "PRIVATE+KEY+PeterNeumann+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz"
const GO_VERIFIER = "PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW"
const GO_TEXT =
  "If you think cryptography is the answer to your problem,\nthen you don't know what your problem is.\n"
const GO_NOTE =
  GO_TEXT +
  "\n\u2014 PeterNeumann x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=\n"
const GO_SEED = new Uint8Array(Buffer.from(GO_SIGNER.split("+").slice(4).join("+"), "base64").subarray(1))

const checkpoint = FastCheck.record({
  origin: FastCheck.stringMatching(/^[a-z0-9.-]{1,20}\/[a-z0-9]{1,10}$/),
  size: FastCheck.nat({ max: Number.MAX_SAFE_INTEGER }),
  root: FastCheck.uint8Array({ minLength: 32, maxLength: 32 })
})

describe("Checkpoint (C2SP signed-note, tlog-checkpoint)", () => {
  it("signs Go's reference note byte for byte, and its verifier key is Go's", () => {
    const publicKey = C.publicKeyOf(GO_SEED)
    expect(C.verifierKey("PeterNeumann", publicKey)).toBe(GO_VERIFIER)
    expect(C.signNote(GO_TEXT, "PeterNeumann", GO_SEED)).toBe(GO_NOTE)
  })

  it("opens Go's note with Go's verifier key; a changed text, name or key does not", () => {
    const key = C.parseVerifierKey(GO_VERIFIER)!
    expect(key.name).toBe("PeterNeumann")
    expect(C.openNote(GO_NOTE, key.name, key.publicKey)).toBe(GO_TEXT)
    expect(
      C.openNote(GO_NOTE.replace("cryptography", "cryptographY"), key.name, key.publicKey)
    ).toBeUndefined()
    expect(C.openNote(GO_NOTE, "PeterNeumanm", key.publicKey)).toBeUndefined()
    expect(C.openNote(GO_NOTE, key.name, C.publicKeyOf(randomBytes(32)))).toBeUndefined()
    expect(C.openNote(GO_NOTE.replace("\n\n", "\n"), key.name, key.publicKey)).toBeUndefined()
  })

  it("refuses verifier keys that are malformed or whose key id does not match", () => {
    for (const bad of [
      "",
      "PeterNeumann",
      "PeterNeumann+c74f20a4+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW",
      "PeterNeumann+c74f20a3+Apc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW",
      "PeterNeumann+c74f20a3+AhpcMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW",
      "Peter Neumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW"
    ]) {
      expect(C.parseVerifierKey(bad)).toBeUndefined()
    }
  })

  it.prop(
    "a checkpoint signed opens to itself with its key; any changed byte of its text, or another key, refuses it",
    [checkpoint, FastCheck.nat()],
    ([c, at]) => {
      const seed = randomBytes(32)
      const publicKey = C.publicKeyOf(seed)
      const note = C.signCheckpoint(c, "cobro.test/log", seed)
      expect(C.openCheckpoint(note, "cobro.test/log", publicKey)).toEqual(c)
      expect(C.parseCheckpoint(C.formatCheckpoint(c))).toEqual(c)
      const text = C.formatCheckpoint(c)
      const i = at % (text.length - 1)
      const changed = text.slice(0, i) + (text[i] === "1" ? "2" : "1") + text.slice(i + 1)
      expect(C.openCheckpoint(changed + note.slice(text.length), "cobro.test/log", publicKey)).toBeUndefined()
      expect(C.openCheckpoint(note, "cobro.test/log", C.publicKeyOf(randomBytes(32)))).toBeUndefined()
    }
  )

  it("refuses checkpoint texts that are not origin, decimal size and a 32-byte base64 root", () => {
    const root = Buffer.alloc(32, 7).toString("base64")
    expect(C.parseCheckpoint(`log\n5\n${root}\n`)).toEqual({
      origin: "log",
      size: 5,
      root: new Uint8Array(32).fill(7)
    })
    for (const bad of [
      `log\n5\n${root}`,
      `\n5\n${root}\n`,
      `log\n05\n${root}\n`,
      `log\n-5\n${root}\n`,
      `log\n5.0\n${root}\n`,
      `log\n99999999999999999999\n${root}\n`,
      `log\n5\n${Buffer.alloc(31).toString("base64")}\n`,
      `log\n5\n`
    ]) {
      expect(C.parseCheckpoint(bad)).toBeUndefined()
    }
  })
})
