/**
 * `cobro user create` (issue 22) run as an operator runs it, in the test's process (`CliInProcess`:
 * the binary's layers, exit codes and output) on PGlite: the password from `COBRO_USER_PASSWORD` or
 * standard input and never from an argument, the user's history with the operator as actor, its
 * refusals as one sentence, and the user, as stored, signing in.
 */
import * as PanelAccess from "@cobro/domain/PanelAccess"
import * as PanelUser from "@cobro/domain/PanelUser"
import * as PasswordHashing from "@cobro/panel/PasswordHashing"
import * as PgEventStore from "@cobro/store-pg/PgEventStore"
import * as PgliteClient from "@cobro/store-pg/PgliteClient"
import { describe, expect, it } from "@effect/vitest"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Os from "node:os"
import * as Redacted from "effect/Redacted"
import * as KeyFile from "../src/KeyFile.js"
import * as SealingKey from "../src/SealingKey.js"
import * as Ids from "../src/Ids.js"
import * as CliDatabase from "./support/CliDatabase.js"
import * as InProcess from "./support/CliInProcess.js"
import * as Cli from "./support/CliProcess.js"

/** Each test runs several commands, each opening the database anew. */
const timeout = 900_000

const PASSWORD = "correct horse battery staple"

const ok = (result: Cli.Result) => {
  expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(0)
  return result
}

/** Runs `cobro <args>` with `input` written to its standard input. */
const runWithInput = (args: ReadonlyArray<string>, env: Record<string, string>, input: string) =>
  InProcess.run(args, env, { stdin: input })

/** The arguments of `cobro user create`. */
const userCreate = (merchant: string, email: string, role: "full_access" | "read_only") => [
  "user",
  "create",
  "--merchant",
  merchant,
  "--email",
  email,
  "--role",
  role
]

/** A fresh PGlite database (`env`) with one merchant, made by `cobro merchant create`. */
const givenMerchant = Effect.gen(function* () {
  const env = yield* CliDatabase.pgliteEnv
  const created = ok(yield* InProcess.run(["merchant", "create", "--name", "Café Sur", "--json"], env))
  return { env, merchantId: JSON.parse(created.stdout).merchant_id as string }
})

/** Runs `cobro <args>` with the password in `COBRO_USER_PASSWORD`; it must succeed. */
const withPassword = (env: Record<string, string>, args: ReadonlyArray<string>) =>
  Effect.map(InProcess.run(args, { ...env, COBRO_USER_PASSWORD: PASSWORD }), ok)

/** {@link givenMerchant} and a panel user of it made by `cobro user create --json`: its result. */
const givenUser = (email: string, role: "full_access" | "read_only") =>
  Effect.gen(function* () {
    const { env, merchantId } = yield* givenMerchant
    const created = yield* withPassword(env, [...userCreate(merchantId, email, role), "--json"])
    return { env, merchantId, created }
  })

/** Signs in with the database of `env` opened anew (the commands have closed it). */
const signInOn = (env: Record<string, string>, email: string, password: string) =>
  Effect.flatMap(DateTime.now, (now) =>
    Effect.either(PanelAccess.signIn({ email, password, address: "127.0.0.1", now }))
  ).pipe(
    Effect.provide(
      Layer.mergeAll(
        PgEventStore.layer,
        PasswordHashing.layer(
          Redacted.make(KeyFile.load(env.DATA_DIR!, SealingKey.fileName, { create: false }).key)
        ),
        Ids.layerRandom
      ).pipe(Layer.provide(PgliteClient.layer({ dataDir: env.DATA_DIR! })))
    ),
    Effect.scoped,
    Effect.orDie
  )

describe("cobro user create on PGlite (DATA_DIR)", () => {
  it.scopedLive(
    "creates a panel user with the password from COBRO_USER_PASSWORD, printed never; its history shows the operator as actor",
    Effect.fnUntraced(function* () {
      const { env, merchantId, created } = yield* givenUser("Ana@Cafe.example", "read_only")
      const user = JSON.parse(created.stdout)
      expect(user).toStrictEqual({
        user_id: expect.stringMatching(/^USR_[0-9a-f]{32}$/),
        merchant_id: merchantId,
        email: "ana@cafe.example",
        role: "read_only",
        created: expect.any(String)
      })
      expect(created.stdout + created.stderr).not.toContain(PASSWORD)

      const history = Cli.jsonLines(
        ok(yield* InProcess.run(["audit", "history", user.user_id, "--json"], env)).stdout
      )
      expect(history.map((h) => [h.version, h.type, h.actor])).toStrictEqual([
        [1, "PanelUserCreated", `cli:${Os.userInfo().username}`]
      ])
      expect(history[0].streamId).toBe(`PanelUser-${user.user_id}`)
      expect(history[0].state).toMatchObject({ _tag: "ACTIVE", email: "ana@cafe.example", role: "read_only" })
      // The log keeps the sealed hash; what the auditor is shown redacts it (issue 31, item 10).
      expect(history[0].data.passwordHash).toBe("<redacted>")
      expect(history[0].state.passwordHash).toBe("<redacted>")
      expect(JSON.stringify(history)).not.toContain("scrypt")
      expect(JSON.stringify(history)).not.toContain(PASSWORD)
      // An id that names nothing: the sentence lists the ids the command takes, a panel user's among them.
      const unknown = yield* InProcess.run(["audit", "history", "what-is-this"], env)
      expect(unknown.code).toBe(2)
      expect(unknown.stderr).toMatch(/names no resource: give .*USR_… for a panel user/)

      const text = (yield* withPassword(env, userCreate(merchantId, "bob@cafe.example", "full_access")))
        .stdout
      expect(text).toMatch(
        /^Panel user USR_[0-9a-f]{32} \(bob@cafe\.example, full_access\) created for merchant MER_/
      )

      // The hash the command stored is one the sign-in verifies.
      const signedIn = yield* signInOn(env, "ana@cafe.example", PASSWORD)
      expect(signedIn).toMatchObject({ _tag: "Right", right: { userId: user.user_id, role: "read_only" } })
      expect(yield* signInOn(env, "ana@cafe.example", "not the password")).toMatchObject({ _tag: "Left" })
    }),
    timeout
  )

  it.scopedLive(
    "the password comes from standard input, never from an argument; a refusal is one sentence and exit code 2",
    Effect.fnUntraced(function* () {
      const { env, merchantId } = yield* givenMerchant
      const create = (email: string) => userCreate(merchantId, email, "full_access")

      const piped = ok(
        yield* runWithInput([...create("ana@cafe.example"), "--json"], env, `${PASSWORD}\nignored\n`)
      )
      expect(JSON.parse(piped.stdout).email).toBe("ana@cafe.example")
      expect(piped.stdout + piped.stderr).not.toContain(PASSWORD)
      expect((yield* signInOn(env, "ana@cafe.example", PASSWORD))._tag).toBe("Right")

      // There is no option to give it in: an argument would show in `ps`.
      const asArgument = yield* InProcess.run([...create("bob@cafe.example"), "--password", PASSWORD], env)
      expect(asArgument.code).not.toBe(0)
      expect(asArgument.code).not.toBe(70)

      const cases: ReadonlyArray<readonly [ReadonlyArray<string>, Record<string, string>, RegExp]> = [
        [
          create("bob@cafe.example"),
          {},
          /no password: set COBRO_USER_PASSWORD, or give it on standard input/
        ],
        [
          create("bob@cafe.example"),
          { COBRO_USER_PASSWORD: "too short" },
          /the password must be 12 to 256 characters/
        ],
        [
          create("bob"),
          { COBRO_USER_PASSWORD: PASSWORD },
          /--email must be an email address \(name@example\.com\), not 'bob'/
        ],
        [
          userCreate("MER_nobody", "bob@cafe.example", "read_only"),
          { COBRO_USER_PASSWORD: PASSWORD },
          /no merchant 'MER_nobody'/
        ],
        [
          create("ANA@cafe.example"),
          { COBRO_USER_PASSWORD: PASSWORD },
          /a panel user with the email 'ana@cafe\.example' exists already/
        ]
      ]
      for (const [args, extra, message] of cases) {
        const result = yield* InProcess.run(args, { ...env, ...extra })
        expect(result.code, `${args.join(" ")}\n${result.stderr}`).toBe(2)
        expect(result.stderr).toMatch(message)
        expect(result.stderr).not.toMatch(Cli.stackFrame)
        expect(result.stderr).not.toContain(PASSWORD)
      }
      // Nothing was written by a refusal: bob has no history.
      const bob = yield* InProcess.run(["audit", "history", PanelUser.userIdOf("bob@cafe.example")], env)
      expect(bob.code).toBe(2)
      expect(bob.stderr).toMatch(/no panel user 'USR_[0-9a-f]{32}' in the log/)
    }),
    timeout
  )

  it.scopedLive(
    "cobro user password sets a new password with the operator as actor: the old one is refused, the new one signs in; refusals are one sentence",
    Effect.fnUntraced(function* () {
      const { env, created } = yield* givenUser("ana@cafe.example", "full_access")
      const userId = JSON.parse(created.stdout).user_id as string
      const NEW = "a brand new password"
      const changed = ok(
        yield* runWithInput(["user", "password", "--email", "ANA@cafe.example", "--json"], env, `${NEW}\n`)
      )
      expect(JSON.parse(changed.stdout)).toStrictEqual({ user_id: userId, email: "ana@cafe.example" })
      expect(changed.stdout + changed.stderr).not.toContain(NEW)
      const history = Cli.jsonLines(
        ok(yield* InProcess.run(["audit", "history", userId, "--json"], env)).stdout
      )
      expect(history.map((h) => [h.type, h.actor])).toStrictEqual([
        ["PanelUserCreated", `cli:${Os.userInfo().username}`],
        ["PasswordChanged", `cli:${Os.userInfo().username}`]
      ])
      expect(yield* signInOn(env, "ana@cafe.example", PASSWORD)).toMatchObject({ _tag: "Left" })
      expect(yield* signInOn(env, "ana@cafe.example", NEW)).toMatchObject({ _tag: "Right" })
      for (const [email, password, message] of [
        ["ana@cafe.example", "too short", /the password must be 12 to 256 characters/],
        ["nobody@cafe.example", NEW, /no panel user has the email 'nobody@cafe\.example'/]
      ] as const) {
        const result = yield* InProcess.run(["user", "password", "--email", email], {
          ...env,
          COBRO_USER_PASSWORD: password
        })
        expect(result.code, result.stderr).toBe(2)
        expect(result.stderr).toMatch(message)
        expect(result.stderr).not.toContain(password)
      }
    }),
    timeout
  )
})
