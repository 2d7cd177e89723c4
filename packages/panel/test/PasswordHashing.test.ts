/**
 * The panel's password hashing on scrypt: the stored format, salted hashes, verification in constant
 * time, parameters carried by each hash, and stored texts that are not hashes refused without work.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as FastCheck from "effect/FastCheck"
import * as Redacted from "effect/Redacted"
import * as PasswordHasher from "@cobro/domain/PasswordHasher"
import * as PasswordHashing from "../src/PasswordHashing.js"

/** Cheap parameters for the property runs (the format and the comparison are the same). */
const CHEAP: PasswordHashing.Parameters = { N: 2 ** 10, r: 8, p: 1 }

describe("PasswordHashing", () => {
  it.effect(
    "a hash is scrypt$32768$8$1$<16-byte salt>$<32-byte key>: two hashes of one password differ, and each verifies it alone",
    () =>
      Effect.gen(function* () {
        const first = yield* PasswordHashing.hash("correct horse battery")
        const second = yield* PasswordHashing.hash("correct horse battery")
        expect(first).toMatch(/^scrypt\$32768\$8\$1\$[A-Za-z0-9+/]{22}==\$[A-Za-z0-9+/]{43}=$/)
        expect(second).not.toBe(first)
        expect(first).not.toContain("correct horse battery")
        expect(yield* PasswordHashing.verify("correct horse battery", first)).toBe(true)
        expect(yield* PasswordHashing.verify("correct horse battery", second)).toBe(true)
        expect(yield* PasswordHashing.verify("correct horse batterY", first)).toBe(false)
        expect(yield* PasswordHashing.verify("", first)).toBe(false)
      })
  )

  it.effect.prop(
    "any password verifies against its own hash and no other password does",
    [FastCheck.string({ minLength: 0, maxLength: 40 }), FastCheck.string({ minLength: 0, maxLength: 40 })],
    ([password, other]) =>
      Effect.gen(function* () {
        const stored = yield* PasswordHashing.hash(password, CHEAP)
        expect(yield* PasswordHashing.verify(password, stored)).toBe(true)
        if (other.normalize("NFC") !== password.normalize("NFC")) {
          expect(yield* PasswordHashing.verify(other, stored)).toBe(false)
        }
      }),
    { fastCheck: { numRuns: 40 } }
  )

  it.effect("a stored hash names its parameters: one made with others still verifies", () =>
    Effect.gen(function* () {
      const stored = yield* PasswordHashing.hash("correct horse battery", CHEAP)
      expect(stored.startsWith("scrypt$1024$8$1$")).toBe(true)
      expect(yield* PasswordHashing.verify("correct horse battery", stored)).toBe(true)
    })
  )

  it.effect("the password is compared in Unicode's composed form: é typed either way is one password", () =>
    Effect.gen(function* () {
      const stored = yield* PasswordHashing.hash("café con leche", CHEAP)
      expect(yield* PasswordHashing.verify("cafe\u0301 con leche", stored)).toBe(true)
    })
  )

  it.effect(
    "a stored text that is not such a hash is false, and asks for no work: malformed, another scheme, parameters past the limits",
    () =>
      Effect.gen(function* () {
        const good = yield* PasswordHashing.hash("correct horse battery", CHEAP)
        const [, , , , salt, key] = good.split("$")
        const malformed = [
          "",
          "correct horse battery",
          "$2b$10$abcdefghijklmnopqrstuuABCDEFGHIJKLMNOPQRSTUVWXYZ01234",
          `argon2$1024$8$1$${salt}$${key}`,
          `scrypt$1024$8$1$${salt}`,
          `scrypt$1024$8$1$${salt}$${key}$extra`,
          `scrypt$1000$8$1$${salt}$${key}`,
          `scrypt$0$8$1$${salt}$${key}`,
          `scrypt$-1024$8$1$${salt}$${key}`,
          `scrypt$1024$8$1$${salt!.slice(0, 8)}$${key}`,
          `scrypt$1024$8$1$${salt}$AAAA`,
          `scrypt$1024$8$1$not base64!$${key}`,
          // Past the limits: a stored text must not make a sign-in spend gigabytes or minutes.
          `scrypt$${2 ** 30}$8$1$${salt}$${key}`,
          `scrypt$1024$64$1$${salt}$${key}`,
          `scrypt$1024$8$64$${salt}$${key}`
        ]
        for (const stored of malformed) {
          expect(PasswordHashing.parse(stored), stored).toBeUndefined()
          expect(yield* PasswordHashing.verify("correct horse battery", stored), stored).toBe(false)
        }
        expect(PasswordHashing.parse(good)?.parameters).toEqual(CHEAP)
      })
  )

  it.effect(
    "the hasher's dummy hash, verified for unknown emails, has the parameters of a real one and matches no password",
    () =>
      Effect.gen(function* () {
        const hasher = yield* PasswordHashing.make()
        expect(PasswordHashing.parse(hasher.dummy)?.parameters).toEqual(PasswordHashing.PARAMETERS)
        expect(yield* hasher.verify("", hasher.dummy)).toBe(false)
        expect((yield* PasswordHashing.make()).dummy).toBe(hasher.dummy)
        expect(
          yield* hasher.verify("correct horse battery", yield* hasher.hash("correct horse battery"))
        ).toBe(true)
      })
  )

  it.effect(
    "the server's hasher seals what it stores: no scrypt text in clear, it verifies only under its own sealing key, and a tampered text is false",
    () =>
      Effect.gen(function* () {
        const key = Redacted.make(Buffer.alloc(32, 1))
        const other = Redacted.make(Buffer.alloc(32, 2))
        const build = (sealingKey: Redacted.Redacted<Buffer>) =>
          Effect.provide(PasswordHasher.PasswordHasher, PasswordHashing.layer(sealingKey))
        const hasher = yield* build(key)
        const stored = yield* hasher.hash("correct horse battery")
        expect(stored.startsWith("sealed$")).toBe(true)
        expect(stored).not.toContain("scrypt")
        expect(PasswordHashing.parse(stored)).toBeUndefined()
        const inner = PasswordHashing.unseal(PasswordHashing.sealingKeyFor(key), stored)
        expect(PasswordHashing.parse(inner ?? "")?.parameters).toEqual(PasswordHashing.PARAMETERS)
        expect(yield* hasher.verify("correct horse battery", stored)).toBe(true)
        expect(yield* hasher.verify("correct horse batterY", stored)).toBe(false)
        // Another server's key: nothing unseals, no scrypt work, false.
        expect(PasswordHashing.unseal(PasswordHashing.sealingKeyFor(other), stored)).toBeUndefined()
        expect(yield* (yield* build(other)).verify("correct horse battery", stored)).toBe(false)
        // The scrypt text in clear (a hash from before sealing, or one copied from elsewhere) is refused.
        expect(yield* hasher.verify("correct horse battery", inner!)).toBe(false)
        const parts = stored.split("$")
        const flipped = Buffer.from(parts[2]!, "base64")
        flipped[0] = flipped[0]! ^ 1
        parts[2] = flipped.toString("base64")
        expect(yield* hasher.verify("correct horse battery", parts.join("$"))).toBe(false)
        expect(PasswordHashing.unseal(PasswordHashing.sealingKeyFor(key), hasher.dummy)).toBeDefined()
      })
  )
})
