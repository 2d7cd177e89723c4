/**
 * The `cobro` command line (issue 7), its commands run in the test's process as the binary runs them
 * (`CliInProcess`; `CliAudit.int.test.ts` runs the binary itself once): the admin commands and their
 * keys against the API, a history that matches the events written, the state at an instant, `verify`
 * on an untouched and on a tampered log, `rebuild` under a running server, `export`.
 * Slow by design: each command opens its database anew, as the binary does, and some beside a server.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Histories from "@cobro/domain/Histories"
import * as Effect from "effect/Effect"
import * as Fs from "node:fs"
import * as CliDatabase from "./support/CliDatabase.js"
import * as InProcess from "./support/CliInProcess.js"
import * as Cli from "./support/CliProcess.js"
import * as ServerProcess from "./support/ServerProcess.js"

/** Each test runs several commands, each opening the database anew: a minute on a loaded machine. */
const timeout = 900_000

const ok = (result: Cli.Result) => {
  expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(0)
  return result
}

/** A merchant created by the CLI, with a terminal bound and enabled: five events in its stream. */
const merchantWithTerminal = (env: Record<string, string>, serial = "SP-1") =>
  Effect.gen(function* () {
    const created = JSON.parse(
      ok(yield* InProcess.run(["merchant", "create", "--name", "Café Sur", "--json"], env)).stdout
    )
    const merchantId: string = created.merchant_id
    const bound = ok(
      yield* InProcess.run(
        [
          "terminal",
          "bind",
          "--merchant",
          merchantId,
          "--serial",
          serial,
          "--model",
          "SMART_PRO",
          "--name",
          "Caja 1",
          "--json"
        ],
        env
      )
    )
    expect(JSON.parse(bound.stdout)).toStrictEqual({
      terminal_model: "SMART_PRO",
      terminal_serial: serial,
      name: "Caja 1",
      status: "BINDED",
      api_enabled: false
    })
    const enabled = ok(
      yield* InProcess.run(
        ["terminal", "enable", "--merchant", merchantId, "--serial", serial, "--json"],
        env
      )
    )
    expect(JSON.parse(enabled.stdout).api_enabled).toBe(true)
    return { merchantId, keys: created.keys }
  })

describe("cobro on PGlite (DATA_DIR)", () => {
  it.scopedLive(
    "audit history lists the events written, each with its time, type, actor and the state after it",
    Effect.fnUntraced(function* () {
      const env = yield* CliDatabase.pgliteEnv
      const { keys, merchantId } = yield* merchantWithTerminal(env)
      expect(merchantId).toMatch(/^MER_[A-Za-z0-9]+$/)
      expect(keys.terminal_api.test.identity_key).toMatch(/^id_test_term_/)
      expect(keys.payment_button.production.secret_key).toMatch(/^sk_live_btn_/)

      const history = Cli.jsonLines(
        ok(yield* InProcess.run(["audit", "history", merchantId, "--json"], env)).stdout
      )
      expect(history.map((h) => [h.version, h.type])).toStrictEqual([
        [1, "MerchantCreated"],
        [2, "IntegrationActivated"],
        [3, "IntegrationActivated"],
        [4, "TerminalBound"],
        [5, "TerminalApiEnabled"]
      ])
      for (const step of history) {
        expect(step.streamId).toBe(`Merchant-${merchantId}`)
        expect(step.actor).toMatch(/^cli/)
        expect(Number.isNaN(Date.parse(step.time))).toBe(false)
      }
      expect(history[0].state).toMatchObject({ _tag: "ENABLED", name: "Café Sur", terminals: [] })
      expect(history[3].state.terminals).toMatchObject([{ serial: "SP-1", apiEnabled: false }])
      expect(history[4].state.terminals).toMatchObject([{ serial: "SP-1", apiEnabled: true }])

      // The same events as the log holds them (the export of the whole log), their sealed secret
      // keys shown redacted (issue 31, item 10): the export keeps them, the hash chain covers them.
      const exported = Cli.jsonLines(ok(yield* InProcess.run(["audit", "export"], env)).stdout)
      const ofMerchant = exported.filter((e) => e.streamId === `Merchant-${merchantId}`)
      expect(
        ofMerchant.map((e) => [e.streamVersion, e.type, e.recordedAt, Histories.redact(e.data)])
      ).toStrictEqual(history.map((h) => [h.version, h.type, h.time, h.data]))
      expect(history[1].data.production.secretKey).toBe("<redacted>")
      expect(ofMerchant[1].data.production.secretKey).not.toBe("<redacted>")

      const table = ok(yield* InProcess.run(["audit", "history", merchantId], env)).stdout
      expect(table).toContain(`Merchant-${merchantId} (merchant): 5 events`)
      expect(table).toMatch(/\n5\s+\S+Z\s+TerminalApiEnabled\s+cli\S*\s+ENABLED terminals=/)
    }),
    timeout
  )

  it.scopedLive(
    "audit state --at gives the state before and after a transition, and before the resource existed",
    Effect.fnUntraced(function* () {
      const env = yield* CliDatabase.pgliteEnv
      const { merchantId } = yield* merchantWithTerminal(env)
      const history = Cli.jsonLines(
        ok(yield* InProcess.run(["audit", "history", merchantId, "--json"], env)).stdout
      )
      const boundAt: string = history[3].time
      const enabledAt: string = history[4].time
      expect(Date.parse(enabledAt)).toBeGreaterThan(Date.parse(boundAt))
      const stateAt = (at: string) =>
        Effect.map(InProcess.run(["audit", "state", merchantId, "--at", at, "--json"], env), (r) =>
          JSON.parse(ok(r).stdout)
        )

      const before = yield* stateAt(new Date(Date.parse(enabledAt) - 1).toISOString())
      expect(before.version).toBe(4)
      expect(before.lastEvent.type).toBe("TerminalBound")
      expect(before.state.terminals).toMatchObject([{ serial: "SP-1", apiEnabled: false }])
      const after = yield* stateAt(enabledAt)
      expect(after.version).toBe(5)
      expect(after.state.terminals).toMatchObject([{ serial: "SP-1", apiEnabled: true }])
      // The same instant written with an offset names the same state.
      const offset = new Date(Date.parse(enabledAt) - 5 * 3600_000).toISOString().replace("Z", "-05:00")
      expect((yield* stateAt(offset)).version).toBe(5)
      const never = yield* stateAt("2000-01-01T00:00:00Z")
      expect(never).toMatchObject({ version: 0, lastEvent: null, state: { _tag: "Initial" } })

      const text = ok(yield* InProcess.run(["audit", "state", merchantId, "--at", boundAt], env)).stdout
      expect(text).toContain(`Merchant-${merchantId} at ${boundAt}: version 4, after TerminalBound`)
    }),
    timeout
  )

  it.scopedLive(
    "a user's mistake (a malformed instant, an unknown id, a missing database) is one sentence and exit code 2, never a stack",
    Effect.fnUntraced(function* () {
      const env = yield* ServerProcess.pgliteEnv
      const missing = yield* InProcess.run(["audit", "verify"], env)
      expect(missing.code).toBe(2)
      expect(missing.stderr).toContain("no Cobro database in")
      expect(Fs.existsSync(env.DATA_DIR)).toBe(false)

      yield* CliDatabase.setUpIn(env)
      const { merchantId } = yield* merchantWithTerminal(env)
      const cases: ReadonlyArray<[ReadonlyArray<string>, RegExp]> = [
        [["audit", "state", merchantId, "--at", "2026-01-31T14:30:00"], /no time zone/],
        [["audit", "state", merchantId, "--at", "2026-02-30T14:30:00Z"], /not an ISO-8601 instant \(day 30/],
        [["audit", "state", merchantId, "--at", "yesterday"], /not an ISO-8601 instant/],
        [["audit", "history", "LNK_doesnotexist"], /no payment link 'LNK_doesnotexist' in the log/],
        [["audit", "history", "what-is-this"], /names no resource/],
        [["audit", "export", "--since", "2026-13-01T00:00:00Z"], /--since: .*month 13/],
        [["audit", "rebuild", "no_such_model"], /no read model named 'no_such_model'/],
        [["terminal", "enable", "--merchant", "MER_nobody", "--serial", "SP-1"], /no merchant 'MER_nobody'/],
        [
          ["terminal", "enable", "--merchant", merchantId, "--serial", "SP-404"],
          /no terminal 'SP-404' is bound/
        ],
        [
          ["terminal", "bind", "--merchant", merchantId, "--serial", "X-1", "--model", "FLIP", "--name", "x"],
          /model 'FLIP' is not supported/
        ],
        [
          [
            "webhook",
            "set",
            "--merchant",
            merchantId,
            "--mode",
            "production",
            "--url",
            "http://example.com/h"
          ],
          /https/
        ],
        [
          ["keys", "rotate", "--merchant", merchantId, "--integration", "nope", "--mode", "test"],
          /terminal_api, payment_button/
        ]
      ]
      // One after another: a PGlite folder is one process's at a time (S-4: a second is refused).
      const results = yield* Effect.forEach(cases, ([args]) => InProcess.run(args, env))
      cases.forEach(([args, message], i) => {
        const result = results[i]!
        expect(result.code, `${args.join(" ")}\n${result.stderr}`).toBe(2)
        expect(result.stderr, args.join(" ")).toMatch(message)
        expect(result.stderr, args.join(" ")).not.toMatch(Cli.stackFrame)
        expect(Cli.stackFrame.test(result.stdout)).toBe(false)
      })
      // Nothing a refused command tried was written.
      const history = Cli.jsonLines(
        ok(yield* InProcess.run(["audit", "history", merchantId, "--json"], env)).stdout
      )
      expect(history.length).toBe(5)
    }),
    timeout
  )
})

const breaksOf = (result: Cli.Result) =>
  JSON.parse(result.stdout).breaks as Array<{ streamId: string; version: number; kind: string }>

describe("cobro webhook set and COBRO_DEV_WEBHOOKS", () => {
  it.scopedLive(
    "with COBRO_DEV_WEBHOOKS=1 the production webhook may be http:// on loopback; without it, it must be https://",
    Effect.fnUntraced(function* () {
      const env = yield* CliDatabase.pgliteEnv
      const created = JSON.parse(
        ok(yield* InProcess.run(["merchant", "create", "--name", "Dev", "--json"], env)).stdout
      )
      const url = "http://127.0.0.1:4000/hooks"
      const set = ["webhook", "set", "--merchant", created.merchant_id, "--mode", "production", "--url", url]
      const refused = yield* InProcess.run(set, env)
      expect(refused.code).toBe(2)
      expect(refused.stderr).toMatch(/the production webhook must be an https:\/\/ URL/)
      const accepted = ok(yield* InProcess.run([...set, "--json"], { ...env, COBRO_DEV_WEBHOOKS: "1" }))
      expect(JSON.parse(accepted.stdout)).toStrictEqual({
        url,
        mode: "production",
        standard_webhooks: false
      })
    }),
    timeout
  )
})

describe("cobro audit verify on PostgreSQL (DATABASE_URL)", () => {
  it.scopedLive(
    "clean on an untouched log; names exactly the stream and version of a row altered with SQL, and of rows deleted",
    Effect.fnUntraced(function* () {
      const env = yield* ServerProcess.postgresEnv
      const url = env.DATABASE_URL
      const a = yield* merchantWithTerminal(env, "A-1")
      const b = yield* merchantWithTerminal(env, "B-1")
      const c = yield* merchantWithTerminal(env, "C-1")

      const clean = ok(yield* InProcess.run(["audit", "verify"], env))
      expect(clean.stdout).toMatch(/^OK: 15 events in 3 streams/m)
      expect(clean.stderr).toMatch(/verify: 15 events in/)
      expect(JSON.parse(ok(yield* InProcess.run(["audit", "verify", "--json"], env)).stdout)).toMatchObject({
        ok: true,
        events: 15,
        breaks: [],
        checkpoints: []
      })

      yield* Cli.sqlOn(
        url,
        `UPDATE cobro_events SET data = jsonb_set(data, '{name}', '"Other name"')
           WHERE stream_id = 'Merchant-${a.merchantId}' AND stream_version = 1`
      )
      yield* Cli.sqlOn(
        url,
        `DELETE FROM cobro_events WHERE stream_id = 'Merchant-${b.merchantId}' AND stream_version = 3`
      )
      yield* Cli.sqlOn(
        url,
        `DELETE FROM cobro_events WHERE stream_id = 'Merchant-${c.merchantId}' AND stream_version = 5`
      )

      const broken = yield* InProcess.run(["audit", "verify"], env)
      expect(broken.code).toBe(1)
      expect(broken.stdout).toContain(`BROKEN Merchant-${a.merchantId} version 1: altered`)
      expect(broken.stdout).toContain(`BROKEN Merchant-${b.merchantId} version 3: missing`)
      expect(broken.stdout).toContain(`BROKEN Merchant-${c.merchantId} version 5: missing`)
      expect(broken.stderr).not.toMatch(Cli.stackFrame)

      const report = yield* InProcess.run(["audit", "verify", "--json"], env)
      expect(report.code).toBe(1)
      expect(
        breaksOf(report)
          .map((x) => ({ streamId: x.streamId, version: x.version, kind: x.kind }))
          .sort((x, y) => x.streamId.localeCompare(y.streamId))
      ).toStrictEqual(
        [
          { streamId: `Merchant-${a.merchantId}`, version: 1, kind: "AlteredEvent" },
          { streamId: `Merchant-${b.merchantId}`, version: 3, kind: "MissingEvent" },
          { streamId: `Merchant-${c.merchantId}`, version: 5, kind: "HeadMismatch" }
        ].sort((x, y) => x.streamId.localeCompare(y.streamId))
      )
    }),
    timeout
  )

  it.scopedLive(
    "a checkpoint that names an event no longer in the log is reported",
    Effect.fnUntraced(function* () {
      const env = yield* ServerProcess.postgresEnv
      const url = env.DATABASE_URL
      const { merchantId } = yield* merchantWithTerminal(env)
      // A read model's checkpoint at the last event (set here: a rebuild's reads wait for every older
      // transaction of the cluster, which other suites may hold open).
      yield* Cli.sqlOn(
        url,
        `INSERT INTO cobro_checkpoints (name, transaction_id, global_position)
         SELECT 'projection:api_keys', transaction_id, global_position FROM cobro_events
         WHERE stream_id = 'Merchant-${merchantId}' AND stream_version = 5
         ON CONFLICT (name) DO UPDATE SET transaction_id = EXCLUDED.transaction_id, global_position = EXCLUDED.global_position`
      )
      expect(ok(yield* InProcess.run(["audit", "verify"], env)).stdout).toMatch(/^OK: 5 events in 1 stream;/m)
      // The last event, which the rebuilt checkpoint names, removed with its head moved back.
      yield* Cli.sqlOn(
        url,
        `DELETE FROM cobro_events WHERE stream_id = 'Merchant-${merchantId}' AND stream_version = 5`
      )
      yield* Cli.sqlOn(
        url,
        `UPDATE cobro_streams SET version = 4, last_hash = (SELECT hash FROM cobro_events
           WHERE stream_id = 'Merchant-${merchantId}' AND stream_version = 4) WHERE stream_id = 'Merchant-${merchantId}'`
      )
      const report = yield* InProcess.run(["audit", "verify", "--json"], env)
      expect(report.code).toBe(1)
      expect(JSON.parse(report.stdout)).toMatchObject({
        breaks: [],
        checkpoints: [{ name: "projection:api_keys" }]
      })
    }),
    timeout
  )
})

describe("cobro admin and rebuild next to a running server on PostgreSQL", () => {
  it.scopedLive(
    "keys from cobro merchant create and keys rotate work against the API; audit rebuild leaves every answer the same",
    Effect.fnUntraced(function* () {
      const {
        hook,
        server,
        database: env
      } = yield* ServerProcess.startOnPostgresWithReceiver({ ADMIN_TOKEN: "cli-test" })
      const call = (key: string, method: string, path: string, body?: unknown) =>
        ServerProcess.call(server, method, path, {
          headers: { authorization: key.startsWith("Bearer") ? key : `x-api-key ${key}` },
          ...(body === undefined ? {} : { body })
        })

      const { keys, merchantId } = yield* merchantWithTerminal(env, "SP-9")
      const terminalKey: string = keys.terminal_api.test.identity_key
      const buttonKey: string = keys.payment_button.test.identity_key
      const hooked = ok(
        yield* InProcess.run(
          ["webhook", "set", "--merchant", merchantId, "--mode", "test", "--url", hook.url, "--json"],
          env
        )
      )
      expect(JSON.parse(hooked.stdout)).toStrictEqual({
        url: hook.url,
        mode: "test",
        standard_webhooks: false
      })
      const methods = yield* call(
        "Bearer cli-test",
        "PUT",
        `/admin/v1/merchants/${merchantId}/payment-methods`,
        {
          terminal: { POS: true },
          link: { CREDIT_CARD: { min: 1000, max: 5000000 } }
        }
      )
      expect(methods.status, methods.text).toBe(200)

      // The CLI's keys authenticate at once.
      expect((yield* call(buttonKey, "GET", "/online/link/v1/payment_methods")).status).toBe(200)
      const link = yield* call(buttonKey, "POST", "/online/link/v1", {
        amount_type: "CLOSE",
        amount: { total_amount: 50_000 }
      })
      expect(link.status, link.text).toBe(201)
      const linkId: string = link.json.payload.payment_link
      const sale = yield* call(
        terminalKey,
        "POST",
        "/payments/app-checkout",
        ServerProcess.terminalSale("SP-9", "order-cli")
      )
      expect(sale.status, sale.text).toBe(201)
      const byReference = "/payments/webhook/notifications/order-cli?is_external_reference=true"
      // The simulated terminal approves, the notifier schedules, the dispatcher delivers: minutes on a loaded machine.
      for (let i = 0; i < 900; i++) {
        const r = yield* call(terminalKey, "GET", byReference)
        if (r.status === 200 && hook.received.length > 0) break
        yield* Effect.sleep("200 millis")
      }
      expect(hook.received.length, server.output()).toBeGreaterThan(0)

      // A key rotated by the CLI: the old one stops, the new one works, on the running server.
      const rotated = JSON.parse(
        ok(
          yield* InProcess.run(
            [
              "keys",
              "rotate",
              "--merchant",
              merchantId,
              "--integration",
              "payment_button",
              "--mode",
              "test",
              "--json"
            ],
            env
          )
        ).stdout
      )
      expect(rotated).toMatchObject({ integration: "payment_button", mode: "test" })
      expect(rotated.identity_key).toMatch(/^id_test_btn_/)
      expect(rotated.secret_key).toMatch(/^sk_test_btn_/)
      expect((yield* call(buttonKey, "GET", `/online/link/v1/${linkId}`)).status).toBe(401)
      const newKey: string = rotated.identity_key

      const paymentId: string = JSON.parse(hook.received[0]!.body).data.payment_id
      const answers = Effect.all(
        [
          call(newKey, "GET", `/online/link/v1/${linkId}`),
          call(newKey, "GET", "/online/link/v1/payment_methods"),
          call(buttonKey, "GET", "/online/link/v1/payment_methods"),
          call(terminalKey, "GET", "/payments/payment-methods"),
          call(terminalKey, "GET", "/payments/binded-terminals"),
          call(terminalKey, "GET", byReference),
          call(terminalKey, "GET", `/payments/webhook/notifications/${paymentId}`),
          call(
            "Bearer cli-test",
            "GET",
            `/admin/v1/notifications/${JSON.parse(hook.received[0]!.body).id}/attempts`
          )
        ].map((answer) => Effect.map(answer, (r) => ({ status: r.status, body: r.text }))),
        { concurrency: 1 }
      )
      const before = yield* answers
      expect(before.map((a) => a.status)).toStrictEqual([200, 200, 401, 200, 200, 200, 200, 200])

      const rebuilt = ok(yield* InProcess.run(["audit", "rebuild"], env))
      expect(rebuilt.stdout).toMatch(/^rebuilt .*api_keys.* from \d+ events/m)
      expect(rebuilt.stderr).toMatch(/rebuild: \d+ events in/)
      expect(yield* answers).toStrictEqual(before)
      // Verified clean, with the server running, after the rebuild.
      expect(ok(yield* InProcess.run(["audit", "verify"], env)).stdout).toMatch(/^OK: /m)
      expect((yield* Effect.promise(() => server.stop())).code).toBe(0)
    }),
    timeout
  )
})
