import { describe, expect, it } from "@effect/vitest"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { randomBytes } from "node:crypto"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import * as Checkpoint from "@cobro/store-pg/Checkpoint"
import * as CheckpointKey from "../src/CheckpointKey.js"
import * as Config from "../src/Config.js"
import * as SealingKey from "../src/SealingKey.js"

const read = (env: Record<string, string>) =>
  Effect.withConfigProvider(Config.config, ConfigProvider.fromMap(new Map(Object.entries(env))))

/** How `resolve` refuses a configuration with DATABASE_URL and none of its key's variables. */
const refusalOnPostgres = <E>(resolve: (config: Config.ServerConfig) => Effect.Effect<unknown, E>) =>
  Effect.flatMap(read({ DATABASE_URL: "postgres://postgres@127.0.0.1:5432/cobro" }), (config) =>
    Effect.flip(resolve(config))
  )

const tempDir = Effect.acquireRelease(
  Effect.sync(() => Fs.mkdtempSync(Path.join(Os.tmpdir(), "cobro-config-"))),
  (dir) => Effect.sync(() => Fs.rmSync(dir, { recursive: true, force: true }))
)

describe("Config", () => {
  it.effect(
    "defaults: PORT 8080, HOST 127.0.0.1, PGlite in ./.data, real clock, production webhook rules",
    Effect.fnUntraced(function* () {
      const config = yield* read({})
      expect(config.port).toBe(8080)
      expect(config.host).toBe("127.0.0.1")
      expect(config.database).toStrictEqual({ _tag: "Pglite", dataDir: "./.data" })
      expect(config.clock).toBe("real")
      expect(config.devWebhooks).toBe(false)
      expect(Option.isNone(config.adminToken)).toBe(true)
      expect(Config.publicUrl(config, { port: 8080 })).toBe("http://127.0.0.1:8080")
      expect(Config.checkoutUrl(config, "http://127.0.0.1:8080")).toBe("http://127.0.0.1:8080/checkout")
    })
  )

  it.effect(
    "every variable is read: DATABASE_URL chooses PostgreSQL, PUBLIC_URL and CHECKOUT_URL the links",
    Effect.fnUntraced(function* () {
      const config = yield* read({
        PORT: "9000",
        HOST: "0.0.0.0",
        DATABASE_URL: "postgres://postgres:pw@db:5432/cobro",
        DATA_DIR: "/var/lib/cobro",
        ADMIN_TOKEN: "s3cret",
        COBRO_CLOCK: "virtual",
        COBRO_DEV_WEBHOOKS: "1",
        PUBLIC_URL: "https://sandbox.example.com/",
        CHECKOUT_URL: "https://pay.example.com/checkout"
      })
      expect(config.port).toBe(9000)
      expect(config.host).toBe("0.0.0.0")
      expect(config.database._tag).toBe("Postgres")
      expect(config.clock).toBe("virtual")
      expect(config.devWebhooks).toBe(true)
      expect(Option.map(config.adminToken, Redacted.value)).toStrictEqual(Option.some("s3cret"))
      expect(Config.publicUrl(config, { port: 9000 })).toBe("https://sandbox.example.com")
      expect(Config.checkoutUrl(config, "https://sandbox.example.com")).toBe(
        "https://pay.example.com/checkout"
      )
      const wildcard = yield* read({ HOST: "0.0.0.0", PORT: "9000" })
      expect(Config.publicUrl(wildcard, { port: 9000 })).toBe("http://127.0.0.1:9000")
    })
  )

  it.effect(
    "an invalid PORT or COBRO_CLOCK refuses to start",
    Effect.fnUntraced(function* () {
      expect((yield* Effect.flip(read({ PORT: "http" })))._op).toBeDefined()
      expect((yield* Effect.flip(read({ COBRO_CLOCK: "fast" })))._op).toBeDefined()
      expect((yield* read({ PORT: "0" })).port).toBe(0)
    })
  )
})

describe("SealingKey", () => {
  it.effect(
    "COBRO_SEALING_KEY is 32 bytes in hex or base64; anything else refuses to start",
    Effect.fnUntraced(function* () {
      const key = randomBytes(32)
      for (const text of [key.toString("hex"), key.toString("base64"), key.toString("base64url")]) {
        const resolved = yield* SealingKey.resolve(yield* read({ COBRO_SEALING_KEY: text }))
        expect(Redacted.value(resolved.key).equals(key)).toBe(true)
        expect(resolved.source).toBe("COBRO_SEALING_KEY")
      }
      for (const text of ["abc", randomBytes(16).toString("hex"), randomBytes(31).toString("base64")]) {
        const error = yield* Effect.flip(SealingKey.resolve(yield* read({ COBRO_SEALING_KEY: text })))
        expect(error.message).toContain("COBRO_SEALING_KEY must be 32 bytes")
      }
    })
  )

  it.scoped(
    "on PGlite without COBRO_SEALING_KEY, a key file is created once in DATA_DIR with mode 0600, then reused",
    Effect.fnUntraced(function* () {
      const dir = yield* tempDir
      const dataDir = Path.join(dir, "data")
      const config = yield* read({ DATA_DIR: dataDir })
      const first = yield* SealingKey.resolve(config)
      const path = Path.join(dataDir, SealingKey.fileName)
      expect(first.source).toStrictEqual({ created: true, path })
      expect(Fs.statSync(path).mode & 0o777).toBe(0o600)
      const second = yield* SealingKey.resolve(config)
      expect(second.source).toStrictEqual({ created: false, path })
      expect(Redacted.value(second.key).equals(Redacted.value(first.key))).toBe(true)
    })
  )

  it.effect(
    "with DATABASE_URL and no COBRO_SEALING_KEY the server refuses to start, saying how to make one",
    Effect.fnUntraced(function* () {
      const error = yield* refusalOnPostgres((config) => SealingKey.resolve(config))
      expect(error.message).toContain("COBRO_SEALING_KEY is required with DATABASE_URL")
      expect(error.message).toContain("openssl rand -hex 32")
    })
  )
})

describe("CheckpointKey", () => {
  it.effect(
    "COBRO_CHECKPOINT_KEY is an Ed25519 seed of 32 bytes; COBRO_LOG_ORIGIN names the log, else its key does",
    Effect.fnUntraced(function* () {
      const seed = randomBytes(32)
      const named = yield* CheckpointKey.resolve(
        yield* read({
          COBRO_CHECKPOINT_KEY: seed.toString("hex"),
          COBRO_LOG_ORIGIN: "cobro.example.com/log"
        })
      )
      expect(named.source).toBe("COBRO_CHECKPOINT_KEY")
      expect(named.signer.origin).toBe("cobro.example.com/log")
      expect(Buffer.from(named.signer.publicKey)).toStrictEqual(Buffer.from(Checkpoint.publicKeyOf(seed)))
      const unnamed = yield* CheckpointKey.resolve(
        yield* read({ COBRO_CHECKPOINT_KEY: seed.toString("base64") })
      )
      expect(unnamed.signer.origin).toBe(Checkpoint.defaultOrigin(unnamed.signer.publicKey))
      expect(unnamed.signer.origin).toMatch(/^cobro\/[0-9a-f]{16}$/)
      const bad = yield* Effect.flip(CheckpointKey.resolve(yield* read({ COBRO_CHECKPOINT_KEY: "abc" })))
      expect(bad.message).toContain("COBRO_CHECKPOINT_KEY must be 32 bytes")
      expect((yield* Effect.flip(read({ COBRO_LOG_ORIGIN: "my log" })))._op).toBeDefined()
      expect((yield* Effect.flip(read({ COBRO_CHECKPOINT_EVERY_EVENTS: "0" })))._op).toBeDefined()
      expect((yield* Effect.flip(read({ COBRO_CHECKPOINT_EVERY_SECONDS: "-1" })))._op).toBeDefined()
      const defaults = yield* read({})
      expect([defaults.checkpointEveryEvents, defaults.checkpointEverySeconds]).toStrictEqual([10_000, 60])
    })
  )

  it.scoped(
    "on PGlite the key file is created once in DATA_DIR (0600) by the server, reused, and only read by the command line",
    Effect.fnUntraced(function* () {
      const dir = yield* tempDir
      const config = yield* read({ DATA_DIR: Path.join(dir, "data") })
      const missing = yield* Effect.flip(CheckpointKey.resolve(config, { create: false }))
      expect(missing.message).toContain("Cannot read the checkpoint key in DATA_DIR")
      const first = yield* CheckpointKey.resolve(config)
      const path = Path.join(dir, "data", CheckpointKey.fileName)
      expect(first.source).toStrictEqual({ created: true, path })
      expect(Fs.statSync(path).mode & 0o777).toBe(0o600)
      const second = yield* CheckpointKey.resolve(config, { create: false })
      expect(second.source).toStrictEqual({ created: false, path })
      expect(Checkpoint.verifierKeyOf(second.signer)).toBe(Checkpoint.verifierKeyOf(first.signer))
    })
  )

  it.effect(
    "with DATABASE_URL and no COBRO_CHECKPOINT_KEY the server refuses to start",
    Effect.fnUntraced(function* () {
      const error = yield* refusalOnPostgres((config) => CheckpointKey.resolve(config))
      expect(error.message).toContain("COBRO_CHECKPOINT_KEY is required with DATABASE_URL")
    })
  )
})
