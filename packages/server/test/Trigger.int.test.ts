/**
 * `cobro trigger EVENT` against a real Cobro (the server's own composition on PGlite, in this process,
 * on a real socket): each event's run prints the ids it created, and the merchant's test webhook (a
 * local HTTP receiver) gets the notification type promised for the printed transaction. A production
 * key, the other integration's key and an unknown event are refused before any request.
 */
import * as Command from "@effect/cli/Command"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpServer from "@effect/platform/HttpServer"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { expect, layer, vi } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"
import { UserError } from "../src/cli/CliError.js"
import * as Trigger from "../src/cli/Trigger.js"
import * as Nodes from "./support/Nodes.js"
import * as ServerProcess from "./support/ServerProcess.js"

const ADMIN_TOKEN = "trigger-admin-token"
const SERIAL = "TRIG-0001"

/** What the suite's server was given: its URL, the merchant's keys, and the test webhook's receiver. */
class Fixture extends Context.Tag("Trigger.int/Fixture")<
  Fixture,
  {
    readonly apiUrl: string
    readonly keys: {
      readonly terminal: { readonly test: string; readonly production: string }
      readonly button: { readonly test: string; readonly production: string }
    }
    readonly received: ReadonlyArray<ServerProcess.Received>
  }
>() {}

const send = Nodes.sender(ADMIN_TOKEN)

/** Retries `check` every 100 ms, at most 300 times (about 30 seconds). */
const eventually = <A, E, R>(check: Effect.Effect<A, E, R>) =>
  Effect.suspend(() => check).pipe(
    Effect.retry({ times: 300, schedule: Schedule.spaced("100 millis") }),
    Effect.orDie
  )

const node = Layer.unwrapScoped(
  Effect.map(Nodes.setUpPgliteSettings(ADMIN_TOKEN), (settings) => Nodes.nodeWithHttp(settings, Effect.never))
)

/**
 * A merchant as the admin API makes it: a SMART_PRO terminal bound and enabled for the API, POS on
 * for terminal sales, CREDIT_CARD links between 1,000 and 5,000,000, and a test webhook to a local
 * receiver (the nodes allow loopback webhooks, COBRO_DEV_WEBHOOKS).
 */
const fixture = Layer.scoped(
  Fixture,
  Effect.gen(function* () {
    const hook = yield* ServerProcess.webhookReceiver
    const server = yield* HttpServer.HttpServer
    const port = server.address._tag === "TcpAddress" ? server.address.port : 0
    const admin = (method: "POST" | "PUT" | "PATCH", path: string, body: unknown, status: number) =>
      Effect.tap(send(method, path, { admin: true, body }), (reply) =>
        reply.status === status
          ? Effect.void
          : Effect.dieMessage(`${method} ${path}: ${reply.status} ${reply.text}`)
      )
    const created = yield* admin("POST", "/admin/v1/merchants", { name: "Tienda Trigger" }, 201)
    const base = `/admin/v1/merchants/${created.json.merchant_id}`
    yield* admin(
      "POST",
      `${base}/terminals`,
      { terminal_model: "SMART_PRO", terminal_serial: SERIAL, name: "Caja" },
      201
    )
    yield* admin("PATCH", `${base}/terminals/${SERIAL}`, { api_enabled: true }, 200)
    yield* admin(
      "PUT",
      `${base}/payment-methods`,
      { terminal: { POS: true }, link: { CREDIT_CARD: { min: 1000, max: 5000000 } } },
      200
    )
    yield* admin("PUT", `${base}/webhook`, { url: hook.url, mode: "test" }, 200)
    const keys = created.json.keys
    const fixture = {
      apiUrl: `http://127.0.0.1:${port}`,
      keys: {
        terminal: {
          test: keys.terminal_api.test.identity_key as string,
          production: keys.terminal_api.production.identity_key as string
        },
        button: {
          test: keys.payment_button.test.identity_key as string,
          production: keys.payment_button.production.identity_key as string
        }
      },
      received: hook.received
    }
    // The log-backed directory may answer the first lookup of a new key late: one warm-up read each.
    yield* eventually(
      Effect.filterOrFail(
        send("GET", "/payments/binded-terminals", { key: fixture.keys.terminal.test }),
        (r) => r.status === 200
      )
    )
    yield* eventually(
      Effect.filterOrFail(
        send("GET", "/v1/payment/pse/banks", { key: fixture.keys.button.test }),
        (r) => r.status === 200
      )
    )
    return fixture
  })
)

/** The notifications the test webhook received about `subject`, as `type`s, once `expected` is among them. */
const notificationsAbout = (subject: string, expected: string) =>
  Effect.flatMap(Fixture, ({ received }) => {
    const about = () =>
      received
        .map((r) => JSON.parse(r.body))
        .filter((n) => n.subject === subject && n.data?.payment_id === subject)
    return eventually(
      Effect.suspend(() =>
        about().some((n) => n.type === expected) ? Effect.succeed(about()) : Effect.fail("not yet")
      )
    )
  })

/** Runs the trigger as the command does, over a real HTTP client. */
const trigger = (event: string, key: string) =>
  Effect.flatMap(Fixture, ({ apiUrl }) =>
    Trigger.trigger({ event, apiKey: key, apiUrl }).pipe(Effect.provide(NodeHttpClient.layer))
  )

/** An `HttpClient` that counts the requests it is asked to make, and makes none. */
const counting = () => {
  const made: Array<string> = []
  const client = HttpClient.make((request) => {
    made.push(`${request.method} ${request.url}`)
    return Effect.die("no request expected")
  })
  return { made, layer: Layer.succeed(HttpClient.HttpClient, client) }
}

/**
 * The trigger of `event` with the merchant's test key of `integration`, over an `HttpClient` that
 * makes no request, refused: its error, and the requests it asked for.
 */
const refusedOffline = (event: string, integration: "terminal" | "button") =>
  Effect.gen(function* () {
    const { apiUrl, keys } = yield* Fixture
    const { layer, made } = counting()
    const error = yield* Effect.flip(
      Trigger.trigger({ event, apiKey: keys[integration].test, apiUrl }).pipe(Effect.provide(layer))
    )
    return { error, made }
  })

/** Seconds from now to the next 08:00 in Bogotá when it is 21:00 or later there (voids close at 21:00). */
const untilVoidWindowOpens = (nowMillis: number): number => {
  const bogota = new Date(nowMillis - 5 * 3600_000)
  if (bogota.getUTCHours() < 21) return 0
  const next = Date.UTC(bogota.getUTCFullYear(), bogota.getUTCMonth(), bogota.getUTCDate() + 1, 8)
  return Math.ceil((next - bogota.getTime()) / 1000)
}

layer(Layer.provideMerge(fixture, node), { excludeTestServices: true, timeout: "120 seconds" })(
  "cobro trigger EVENT",
  (it) => {
    /** By the event's family (its name's first part): the key it takes and the resources it creates. */
    const families = {
      terminal: { key: "terminal", kinds: ["terminal", "checkout", "transaction"] },
      link: { key: "button", kinds: ["link", "transaction"] },
      online: { key: "button", kinds: ["intent", "transaction"] }
    } as const
    const cases: ReadonlyArray<{
      readonly event: Trigger.EventName
      /** Every type the transaction is notified of, in the end. */
      readonly types: ReadonlyArray<string>
    }> = [
      { event: "terminal.sale_approved", types: ["SALE_APPROVED"] },
      { event: "terminal.sale_rejected", types: ["SALE_REJECTED"] },
      { event: "link.sale_approved", types: ["SALE_APPROVED"] },
      { event: "link.sale_rejected", types: ["SALE_REJECTED"] },
      { event: "online.sale_approved", types: ["SALE_APPROVED"] },
      { event: "online.sale_rejected", types: ["SALE_REJECTED"] },
      { event: "online.void_approved", types: ["SALE_APPROVED", "VOID_APPROVED"] }
    ]

    for (const { event, types } of cases) {
      const { key, kinds } = families[event.split(".")[0] as keyof typeof families]
      const promised = Trigger.EVENTS[event].notification
      it.effect(`${event}: the test webhook gets ${promised} for the transaction printed`, () =>
        Effect.gen(function* () {
          const { keys } = yield* Fixture
          if (event === "online.void_approved") {
            const seconds = untilVoidWindowOpens(Date.now())
            if (seconds > 0)
              yield* send("POST", "/admin/v1/clock/advance", { admin: true, body: { seconds } })
          }
          const triggered = yield* trigger(event, keys[key].test)
          expect(triggered.notification).toBe(promised)
          expect(triggered.resources.map((r) => r.kind)).toEqual(kinds)
          expect(triggered.transactionId).toMatch(/^TRX_/)
          const lines = Trigger.render(triggered, { json: false })
          for (const resource of triggered.resources) {
            expect(lines).toContain(`${resource.kind.padEnd(12)} ${resource.id}`)
          }
          expect(lines.some((l) => l.startsWith("notification") && l.includes(promised))).toBe(true)

          const notified = yield* notificationsAbout(triggered.transactionId, promised)
          // The webhook may get the approval and the void in either order: compare as sets.
          yield* notificationsAbout(triggered.transactionId, types[types.length - 1]!)
          expect([...new Set(notified.map((n) => n.type))].sort()).toEqual([...types].sort())
          for (const n of notified) expect(n.data.metadata.reference).toBe(triggered.reference)
        })
      )
    }

    it.effect("a production key is refused before any request: nothing is created", () =>
      Effect.gen(function* () {
        const { apiUrl, keys } = yield* Fixture
        for (const [event, key] of [
          ["online.sale_approved", keys.button.production],
          ["terminal.sale_approved", keys.terminal.production]
        ] as const) {
          const { layer, made } = counting()
          const exit = yield* Effect.exit(
            Trigger.trigger({ event, apiKey: key, apiUrl }).pipe(Effect.provide(layer))
          )
          expect(exit).toStrictEqual(Exit.fail(expect.any(UserError)))
          expect(Exit.isFailure(exit) && String(exit.cause)).toContain("production key")
          expect(made).toEqual([])
        }
      })
    )

    it.effect("the other integration's key is refused, naming the key the event needs", () =>
      Effect.gen(function* () {
        const { error, made } = yield* refusedOffline("online.sale_approved", "terminal")
        expect(error).toBeInstanceOf(UserError)
        expect(error.message).toContain("payment button test key (id_test_btn_…)")
        expect(made).toEqual([])
      })
    )

    it.effect("a terminal event for a merchant with no bound terminal says so, and creates nothing", () =>
      Effect.gen(function* () {
        const created = yield* send("POST", "/admin/v1/merchants", {
          admin: true,
          body: { name: "Sin Datáfono" }
        })
        expect(created.status).toBe(201)
        const key: string = created.json.keys.terminal_api.test.identity_key
        yield* eventually(
          Effect.filterOrFail(send("GET", "/payments/binded-terminals", { key }), (r) => r.status === 200)
        )
        const error = yield* Effect.flip(trigger("terminal.sale_approved", key))
        expect(error).toBeInstanceOf(UserError)
        expect(error.message).toContain("the merchant has no bound terminal")
      })
    )

    it.effect("an unknown EVENT is refused with the list of the valid ones", () =>
      Effect.gen(function* () {
        const { error, made } = yield* refusedOffline("sale.refunded", "button")
        expect(error).toBeInstanceOf(UserError)
        expect(error.message).toContain('unknown event "sale.refunded"')
        for (const name of Trigger.EVENT_NAMES) expect(error.message).toContain(name)
        expect(made).toEqual([])
      })
    )

    it.effect("the command reads the key from COBRO_API_KEY and prints one JSON object with --json", () =>
      Effect.gen(function* () {
        const { apiUrl, keys } = yield* Fixture
        const written: Array<string> = []
        const spy = vi.spyOn(process.stdout, "write").mockImplementation((chunk: any) => {
          written.push(String(chunk))
          return true
        })
        const previous = process.env["COBRO_API_KEY"]
        process.env["COBRO_API_KEY"] = keys.button.test
        const run = Command.run(Trigger.command, { name: "cobro", version: "0.0.0" })
        yield* run(["node", "cobro", "online.sale_approved", "--api-url", apiUrl, "--json"]).pipe(
          Effect.provide(NodeContext.layer),
          Effect.ensuring(
            Effect.sync(() => {
              spy.mockRestore()
              if (previous === undefined) delete process.env["COBRO_API_KEY"]
              else process.env["COBRO_API_KEY"] = previous
            })
          )
        )
        expect(written).toHaveLength(1)
        const printed = JSON.parse(written[0]!)
        expect(printed).toMatchObject({
          event: "online.sale_approved",
          notification: "SALE_APPROVED",
          intent: expect.stringMatching(/^cobro-trigger-/),
          transaction: expect.stringMatching(/^TRX_/)
        })
        yield* notificationsAbout(printed.transaction, "SALE_APPROVED")
      })
    )
  }
)
