/**
 * The `PasswordHasher` of the merchant panel on scrypt from `node:crypto` (issue 22: "passwords hashed
 * with a memory-hard function"): N = 2^15, r = 8, p = 1 (32 MiB and some tens of milliseconds per
 * hash, OWASP's recommended floor for scrypt), a 16-byte random salt, a 32-byte key, stored as
 * `scrypt$<N>$<r>$<p>$<salt base64>$<hash base64>`. A stored hash names its own parameters, so the
 * cost can be raised later and the hashes made before still verify. Hashing runs on libuv's thread
 * pool, never on the event loop.
 *
 * The server's hasher ({@link layer}) seals that text with AES-256-GCM under a key derived from the
 * server's sealing key before it reaches the log: the log is exported to auditors and kept forever,
 * and a hash in clear there could be attacked offline by anyone holding an export. Sealed, it is
 * useless without the sealing key, as the merchants' sealed secrets are.
 */
import * as PasswordHasher from "@cobro/domain/PasswordHasher"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes, scrypt, timingSafeEqual } from "node:crypto"

/** scrypt's parameters. */
export interface Parameters {
  /** The CPU and memory cost, a power of two. */
  readonly N: number
  /** The block size. */
  readonly r: number
  /** The parallelism. */
  readonly p: number
}

/** The parameters new hashes are made with. */
export const PARAMETERS: Parameters = { N: 2 ** 15, r: 8, p: 1 }

/** The salt's length in bytes. */
export const SALT_BYTES = 16

/** The derived key's length in bytes. */
export const KEY_BYTES = 32

/** The prefix of the stored format. */
export const SCHEME = "scrypt"

/**
 * The bounds a stored hash's parameters must keep to be verified at all: a stored text that asks for
 * more work or memory than any hash Cobro makes is refused (false), not computed.
 */
const LIMITS = { maxN: 2 ** 20, maxR: 32, maxP: 16 }

/** scrypt needs 128 · N · r bytes; Node refuses anything above `maxmem` (32 MiB by default, exactly N = 2^15, r = 8). */
const maxmemFor = ({ N, r }: Parameters): number => 2 * 128 * N * r

const derive = (password: string, salt: Buffer, parameters: Parameters, length: number) =>
  Effect.async<Buffer>((resume) => {
    scrypt(
      password.normalize("NFC"),
      salt,
      length,
      { N: parameters.N, r: parameters.r, p: parameters.p, maxmem: maxmemFor(parameters) },
      (error, key) => resume(error === null ? Effect.succeed(key) : Effect.die(error))
    )
  })

/**
 * A new hash of `password` with `parameters`, in the stored format. The password is normalised to
 * NFC first, so that the same characters typed on two keyboards give the same hash.
 *
 * @category constructors
 */
export const hash = (password: string, parameters: Parameters = PARAMETERS): Effect.Effect<string> =>
  Effect.suspend(() => {
    const salt = randomBytes(SALT_BYTES)
    return Effect.map(
      derive(password, salt, parameters, KEY_BYTES),
      (key) =>
        `${SCHEME}$${parameters.N}$${parameters.r}$${parameters.p}$${salt.toString("base64")}$${key.toString("base64")}`
    )
  })

const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/
const INTEGER = /^[1-9][0-9]{0,8}$/

/** A stored hash read back, or undefined when it is not one this hasher made. */
export const parse = (
  stored: string
): { readonly parameters: Parameters; readonly salt: Buffer; readonly key: Buffer } | undefined => {
  const parts = stored.split("$")
  if (parts.length !== 6 || parts[0] !== SCHEME) return undefined
  const [, n, r, p, salt, key] = parts as [string, string, string, string, string, string]
  if (![n, r, p].every((x) => INTEGER.test(x)) || !BASE64.test(salt) || !BASE64.test(key)) return undefined
  const parameters = { N: Number(n), r: Number(r), p: Number(p) }
  const powerOfTwo = parameters.N >= 2 && (parameters.N & (parameters.N - 1)) === 0
  if (!powerOfTwo || parameters.N > LIMITS.maxN || parameters.r > LIMITS.maxR || parameters.p > LIMITS.maxP) {
    return undefined
  }
  const saltBytes = Buffer.from(salt, "base64")
  const keyBytes = Buffer.from(key, "base64")
  if (saltBytes.length < SALT_BYTES || keyBytes.length < 16 || keyBytes.length > 64) return undefined
  return { parameters, salt: saltBytes, key: keyBytes }
}

/**
 * Whether `password` is the one `stored` was made from, compared in constant time. A stored text
 * that is not this format, or asks for parameters beyond the limits, is false.
 *
 * @category predicates
 */
export const verify = (password: string, stored: string): Effect.Effect<boolean> =>
  Effect.suspend(() => {
    const parsed = parse(stored)
    if (parsed === undefined) return Effect.succeed(false)
    return Effect.map(derive(password, parsed.salt, parsed.parameters, parsed.key.length), (key) =>
      timingSafeEqual(key, parsed.key)
    )
  })

/**
 * The dummy hash of each set of parameters, made once per process: a hash of random bytes no one
 * knows, with those parameters, so that verifying against it costs what verifying a user's does. (Its
 * secret does not matter: an unknown email is refused whatever the verification says.)
 */
const dummies = new Map<string, Effect.Effect<string>>()

const dummyFor = (parameters: Parameters): Effect.Effect<string> => {
  const key = `${parameters.N}$${parameters.r}$${parameters.p}`
  let dummy = dummies.get(key)
  if (dummy === undefined) {
    dummy = Effect.runSync(Effect.cached(hash(randomBytes(32).toString("base64"), parameters)))
    dummies.set(key, dummy)
  }
  return dummy
}

/**
 * The hasher with `parameters`, with its dummy hash (what an unknown email is verified against).
 *
 * @category constructors
 */
export const make = (
  parameters: Parameters = PARAMETERS
): Effect.Effect<PasswordHasher.PasswordHasher["Type"]> =>
  Effect.map(dummyFor(parameters), (dummy) =>
    PasswordHasher.PasswordHasher.of({
      hash: (password) => hash(password, parameters),
      verify,
      dummy
    })
  )

/** The prefix of a sealed hash: `sealed$<iv base64>$<ciphertext base64>$<tag base64>`. */
export const SEALED_SCHEME = "sealed"

/** The AES-256-GCM key of the password hashes: HKDF-SHA256 of the sealing key, for this use only. */
export const sealingKeyFor = (sealingKey: Redacted.Redacted<Buffer>): Buffer =>
  Buffer.from(
    hkdfSync("sha256", Redacted.value(sealingKey), Buffer.alloc(0), "cobro panel password hashes", 32)
  )

/** `text` sealed under `key` with a fresh 12-byte nonce. */
export const seal = (key: Buffer, text: string): string => {
  const iv = randomBytes(12)
  const cipher = createCipheriv("aes-256-gcm", key, iv)
  const sealed = Buffer.concat([cipher.update(text, "utf8"), cipher.final()])
  return [
    SEALED_SCHEME,
    iv.toString("base64"),
    sealed.toString("base64"),
    cipher.getAuthTag().toString("base64")
  ].join("$")
}

/** The text `stored` seals under `key`, or undefined when it is not sealed text of this key. */
export const unseal = (key: Buffer, stored: string): string | undefined => {
  const parts = stored.split("$")
  if (parts.length !== 4 || parts[0] !== SEALED_SCHEME || !parts.slice(1).every((p) => BASE64.test(p))) {
    return undefined
  }
  const [iv, sealed, tag] = parts.slice(1).map((p) => Buffer.from(p, "base64")) as [Buffer, Buffer, Buffer]
  if (iv.length !== 12 || tag.length !== 16) return undefined
  try {
    const decipher = createDecipheriv("aes-256-gcm", key, iv)
    decipher.setAuthTag(tag)
    return Buffer.concat([decipher.update(sealed), decipher.final()]).toString("utf8")
  } catch {
    return undefined
  }
}

/**
 * `hasher` with its stored texts sealed under `key`: what it stores is sealed, what it verifies is
 * unsealed first (a text that does not unseal under this key is false, with no scrypt work).
 *
 * @category combinators
 */
export const sealed = (
  hasher: PasswordHasher.PasswordHasher["Type"],
  key: Buffer
): PasswordHasher.PasswordHasher["Type"] =>
  PasswordHasher.PasswordHasher.of({
    hash: (password) => Effect.map(hasher.hash(password), (text) => seal(key, text)),
    verify: (password, stored) => {
      const text = unseal(key, stored)
      return text === undefined ? Effect.succeed(false) : hasher.verify(password, text)
    },
    dummy: seal(key, hasher.dummy)
  })

/**
 * The `PasswordHasher` on scrypt with {@link PARAMETERS}, its stored texts sealed under a key
 * derived from the server's sealing key.
 *
 * @category layers
 */
export const layer = (sealingKey: Redacted.Redacted<Buffer>): Layer.Layer<PasswordHasher.PasswordHasher> =>
  Layer.effect(
    PasswordHasher.PasswordHasher,
    Effect.map(make(), (hasher) => sealed(hasher, sealingKeyFor(sealingKey)))
  )
