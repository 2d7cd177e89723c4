/**
 * Every endpoint of the contract, through the client, against a real Cobro server (one for the
 * file, on the sandbox's virtual clock): each is called with a request that succeeds, through the
 * Promise client where it has the call and else through the Effect client (`Client.make`): the
 * health checks, the terminal sandbox, the panel users and the 3DS challenge page (HTML, no key:
 * the Effect client decodes its `text/html` body as the contract's `Text` and sends the decision as
 * the form it declares). Every client talks to the server through a recording proxy, which lists the
 * status each request was answered with; the file ends by matching those requests to the route
 * templates `HttpApi.reflect(CobroApi)` enumerates and asserting that every endpoint was answered
 * 2xx at least once.
 */
import { CobroApi } from "@cobro/api/Api"
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import * as HttpApi from "@effect/platform/HttpApi"
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Client from "../src/Client.js"
import { Cobro } from "../src/Cobro.js"
import * as CobroServer from "./support/CobroServer.js"
import {
  cardAttempt,
  eventually,
  fallbackNotifications,
  givenMerchant,
  terminalSale
} from "./support/Merchants.js"
import * as Proxy from "./support/Proxy.js"

const promise = <A>(f: () => Promise<A>) => Effect.promise(f)

// ---------------------------------------------------------------------------------------------
// The contract's routes
// ---------------------------------------------------------------------------------------------

/** An endpoint of the contract and the requests its path template matches. */
interface Route {
  /** `group.endpoint`, as the Effect client names it. */
  readonly name: string
  readonly method: string
  readonly template: string
  readonly segments: ReadonlyArray<string>
}

/** Every endpoint of `CobroApi`, as `HttpApi.reflect` enumerates them. */
const routesOf = (): ReadonlyArray<Route> => {
  const routes: Array<Route> = []
  HttpApi.reflect(CobroApi, {
    onGroup: () => {},
    onEndpoint: ({ group, endpoint }) =>
      routes.push({
        name: `${group.identifier}.${endpoint.name}`,
        method: endpoint.method,
        template: endpoint.path,
        segments: endpoint.path.split("/")
      })
  })
  return routes
}

const isParam = (segment: string) => segment.startsWith(":")

const fits = (route: Route, method: string, segments: ReadonlyArray<string>) =>
  route.method === method &&
  route.segments.length === segments.length &&
  route.segments.every((segment, i) => isParam(segment) || segment === segments[i])

/**
 * The endpoint a request reached: among the templates it fits, the one with a static segment where
 * the others have a parameter first, as the router decides (`GET /online/link/v1/payment_methods`
 * is B1, not B3 of the link `payment_methods`).
 */
const routeOf = (routes: ReadonlyArray<Route>, method: string, path: string): Route | undefined => {
  const segments = path.split("/")
  const candidates = routes.filter((route) => fits(route, method, segments))
  return candidates.sort((a, b) => {
    const i = a.segments.findIndex((segment, i) => isParam(segment) !== isParam(b.segments[i]!))
    return i === -1 ? 0 : isParam(a.segments[i]!) ? 1 : -1
  })[0]
}

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

/** The transaction id of a C4 answer (bare, or enveloped when 3DS asks for a challenge). */
const transactionOf = (attempt: { transaction_id: string } | { payload: { transaction_id: string } }) =>
  "transaction_id" in attempt ? attempt.transaction_id : attempt.payload.transaction_id

/** Bogotá is UTC−5 all year (no daylight saving). */
const bogotaHour = (iso: string) => (new Date(iso).getUTCHours() + 24 - 5) % 24

layer(CobroServer.layerWith({ clock: "virtual" }), { excludeTestServices: true, timeout: 120_000 })(
  "every endpoint through the client",
  (it) => {
    it.scoped(
      "every endpoint of CobroApi (HttpApi.reflect) is answered 2xx at least once through the client, the answers' key fields checked",
      () =>
        Effect.gen(function* () {
          const server = yield* CobroServer.CobroServer
          const proxy = yield* Proxy.recorder(server.url)
          const url = proxy.url
          const hook = yield* Proxy.receiver
          const admin = new Cobro({ baseUrl: url, adminToken: server.adminToken })
          const operator = yield* Client.make({ baseUrl: url, adminToken: server.adminToken })
          const anonymous = yield* Client.make({ baseUrl: url })

          // --- health (Effect client: the Promise client has no health calls) ------------------
          expect((yield* anonymous.health.health()).payload.status).toBe("ok")
          expect((yield* anonymous.health.ready()).payload.status).toBe("ok")

          // --- the virtual clock: a void needs the Bogotá day before 21:00 --------------------
          const clock = yield* promise(() => admin.admin.advanceClock({ seconds: 0 }))
          expect(Number.isNaN(Date.parse(clock.now))).toBe(false)
          if (bogotaHour(clock.now) >= 20) {
            // Late in Bogotá: on to 08:00 the next morning (the clock only moves forward).
            const hours = (24 - bogotaHour(clock.now) + 8) % 24
            const moved = yield* promise(() => admin.admin.advanceClock({ seconds: hours * 3600 }))
            expect(bogotaHour(moved.now)).toBeLessThan(20)
          }

          // --- admin: a merchant (create, bind, patch terminal, methods, webhook) --------------
          const serial = "SN-EVERY-1"
          const { merchant, keys } = yield* promise(() =>
            givenMerchant(admin, { name: "Tienda Completa", serial, webhookUrl: hook.url })
          )
          expect(merchant).toMatch(/^MER_/)

          // --- terminal A1–A4 (terminal API test key) ------------------------------------------
          const terminal = new Cobro({ baseUrl: url, apiKey: keys.terminal_api.test.identity_key })
          expect(JSON.stringify(yield* promise(() => terminal.terminal.paymentMethods()))).toContain("POS")
          expect(JSON.stringify(yield* promise(() => terminal.terminal.boundTerminals()))).toContain(serial)
          const checkout = yield* promise(() => terminal.terminal.checkout(terminalSale(serial, "order-A3")))
          expect(checkout.payload.integration_id).toMatch(/^INT_/)
          const fallback = yield* promise(() => fallbackNotifications(terminal, "order-A3"))
          expect(fallback.notifications[0]!.type).toBe("SALE_APPROVED")

          // --- the terminal sandbox (Effect client: no Promise call) ----------------------------
          const sandbox = yield* Client.make({ baseUrl: url, apiKey: keys.terminal_api.test.identity_key })
          const behavior = yield* sandbox.sandbox.setBehavior({
            path: { terminal_serial: serial },
            payload: { mode: "manual" }
          })
          expect(behavior).toMatchObject({ terminal_serial: serial, behavior: "manual" })
          const locked = yield* sandbox.sandbox.performAction({
            path: { terminal_serial: serial },
            payload: { action: "lock" }
          })
          expect(locked.locked).toBe(true)
          const unlocked = yield* sandbox.sandbox.performAction({
            path: { terminal_serial: serial },
            payload: { action: "unlock" }
          })
          expect(unlocked.locked).toBe(false)

          // --- links B1–B3 (payment button test key); the operator cancels one ------------------
          const button = new Cobro({ baseUrl: url, apiKey: keys.payment_button.test.identity_key })
          expect(JSON.stringify(yield* promise(() => button.links.paymentMethods()))).toContain("CREDIT_CARD")
          const link = yield* promise(() =>
            button.links.create({
              amount_type: "CLOSE",
              amount: { currency: "COP", total_amount: 25_000 },
              reference: "order-B2"
            })
          )
          expect(link.payload.url).toContain(link.payload.payment_link)
          const record = yield* promise(() => button.links.retrieve(link.payload.payment_link))
          expect(record).toMatchObject({ id: link.payload.payment_link, total: 25_000, status: "ACTIVE" })
          const cancelled = yield* promise(() => admin.admin.links.cancel(link.payload.payment_link))
          expect(cancelled).toMatchObject({ id: link.payload.payment_link, status: "CANCELLED" })

          // --- online C1–C9 -----------------------------------------------------------------
          /** An intent paid with the sandbox's approving card: its transaction, once APPROVED. */
          const paid = (reference: string, total: number) =>
            Effect.gen(function* () {
              yield* promise(() =>
                button.online.intents.create({
                  reference_id: reference,
                  amount: { currency: "COP", total_amount: total }
                })
              )
              const attempt = yield* promise(() => button.online.payments.create(cardAttempt(reference)))
              const transactionId = transactionOf(attempt)
              const payment = yield* promise(() =>
                eventually(30_000, async () => {
                  const read = await button.online.payments.retrieve(reference)
                  return read.status === "RUNNING" ? undefined : read
                })
              )
              expect(payment).toMatchObject({ transaction_id: transactionId, status: "APPROVED" })
              return transactionId
            })

          // C1, C2, C3: an intent created, read and updated.
          const intent = yield* promise(() =>
            button.online.intents.create({
              reference_id: "order-C3",
              amount: { currency: "COP", total_amount: 40_000 }
            })
          )
          expect(intent).toMatchObject({ reference_id: "order-C3", status: "ACTIVE", test: true })
          const updated = yield* promise(() =>
            button.online.intents.update({
              reference_id: "order-C3",
              amount: { currency: "COP", total_amount: 45_000 },
              description: "Updated"
            })
          )
          expect(updated).toMatchObject({ reference_id: "order-C3", description: "Updated" })
          const reread = yield* promise(() => button.online.intents.retrieve("order-C3"))
          expect(reread.amount.total_amount).toBe(45_000)

          // C4, C5, C7: approved, then voided the same Bogotá day.
          const voidable = yield* paid("order-void", 30_000)
          expect(
            yield* promise(() => button.online.payments.void({ transaction_id: voidable }))
          ).toBeUndefined()
          expect((yield* promise(() => button.online.payments.retrieve("order-void"))).status).toBe("VOIDED")

          // C4 with 555020: the 3DS challenge; the page shown and approved (Effect client, no key).
          yield* promise(() =>
            button.online.intents.create({
              reference_id: "order-3ds",
              amount: { currency: "COP", total_amount: 555_020 }
            })
          )
          const challenged = yield* promise(() => button.online.payments.create(cardAttempt("order-3ds")))
          if (!("payload" in challenged)) throw new Error("555020 must answer the 3DS response")
          expect(challenged.payload.status).toBe("running")
          const page = /\/challenge\/3ds\/([^/]+)\/([^/?#]+)$/.exec(
            new URL(challenged.payload.next_actions.redirect_url).pathname
          )
          expect(page).not.toBeNull()
          const challengePath = {
            transaction_id: decodeURIComponent(page![1]!),
            token: decodeURIComponent(page![2]!)
          }
          expect(challengePath.transaction_id).toBe(challenged.payload.transaction_id)
          const shown = yield* anonymous.challenge.showChallenge({ path: challengePath })
          expect(shown).toContain('id="approve"')
          expect(shown).toContain("order-3ds")
          // No callback_url: the page shows the result (with one, a 303 to it).
          const decided = yield* anonymous.challenge.completeChallenge({
            path: challengePath,
            payload: { decision: "approve" }
          })
          expect(decided).toContain('data-status="APPROVED"')
          expect((yield* promise(() => button.online.payments.retrieve("order-3ds"))).status).toBe("APPROVED")

          // C6: the PSE banks.
          const banks = yield* promise(() => button.online.banks())
          expect(banks.payload.banks.length).toBeGreaterThan(0)

          // C8, C9 and the operator's review: one refund reviewed by the operator (REJECTED), one
          // approved by the sandbox 60 s of the virtual clock after its request.
          const reviewed = yield* paid("order-review", 20_000)
          const automatic = yield* paid("order-refund", 10_000)
          for (const [reference, transactionId] of [
            ["order-review", reviewed],
            ["order-refund", automatic]
          ] as const) {
            const requested = yield* promise(() =>
              button.online.refunds.create({
                reference_id: reference,
                transaction_id: transactionId,
                reason: "returned"
              })
            )
            expect(requested).toBeUndefined()
          }
          const review = yield* promise(() => admin.admin.refunds.review(reviewed, { outcome: "REJECTED" }))
          expect(review).toMatchObject({ transaction_id: reviewed, status: "REJECTED" })
          expect(review.refund_id).toMatch(/^RFD_/)
          const processing = yield* promise(() => button.online.refunds.retrieve(automatic))
          expect(processing.payload).toMatchObject({ transaction_id: automatic, status: "PROCESSING" })
          expect(processing.payload.date_applied).toBeNull()
          yield* promise(() => admin.admin.advanceClock({ seconds: 61 }))
          const approved = yield* promise(() => button.online.refunds.retrieve(automatic))
          expect(approved.payload.status).toBe("APPROVED")
          expect(approved.payload.date_applied).not.toBeNull()
          expect((yield* promise(() => button.online.payments.retrieve("order-refund"))).status).toBe(
            "REFUNDED"
          )

          // --- the operator's lists and histories ----------------------------------------------
          const merchants = yield* promise(() => admin.admin.merchants.page({ name: "Tienda Completa" }))
          expect(merchants.data.map((m) => m.id)).toEqual([merchant])
          const payments = yield* promise(() => admin.admin.payments.page({ merchant, limit: 100 }))
          expect(payments.data.map((p) => p.kind).sort()).toEqual(
            ["online", "online", "online", "online", "terminal"].sort()
          )
          const links = yield* promise(() => admin.admin.links.page({ merchant }))
          expect(links.data.map((l) => [l.id, l.status])).toEqual([[link.payload.payment_link, "CANCELLED"]])
          const refunds = yield* promise(() => admin.admin.refunds.page({ merchant }))
          // Newest first. (The sandbox's review is decided on C9's read but written only by the next
          // command on the payment, so the list may still show the automatic one PROCESSING.)
          expect(refunds.data.map((r) => r.transaction_id)).toEqual([automatic, reviewed])
          expect(refunds.data[1]!.status).toBe("REJECTED")
          const history = yield* promise(() => admin.admin.history(link.payload.payment_link))
          expect(history.events.map((e) => e.type)).toContain("LinkCancelled")
          const events = yield* promise(() => admin.admin.events.page({ limit: 5 }))
          expect(events.data.length).toBe(5)

          // --- webhook deliveries: attempts, resend, then the webhook removed -------------------
          const delivered = yield* promise(() =>
            eventually(30_000, async () => {
              const page = await admin.admin.notifications.page({ merchant })
              return page.data.find((n) => n.delivery === "delivered")
            })
          )
          const attempts = yield* promise(() => admin.admin.notifications.attempts(delivered.id))
          expect(attempts).toMatchObject({ notification_id: delivered.id, status: "DELIVERED" })
          expect(attempts.attempts[0]).toMatchObject({ delivered: true, status_code: 200 })
          const resent = yield* promise(() => admin.admin.notifications.resend(delivered.id))
          expect(resent.notification_id).toBe(delivered.id)
          expect(yield* promise(() => admin.admin.webhooks.delete(merchant, "test"))).toBeUndefined()

          // --- keys and the account's status (another merchant: its keys stop working) ----------
          const other = yield* promise(() => admin.admin.merchants.create({ name: "Tienda Rotada" }))
          const rotated = yield* promise(() =>
            admin.admin.keys.rotate(other.merchant_id, { integration: "payment_button", mode: "test" })
          )
          expect(rotated).toMatchObject({ integration: "payment_button", mode: "test" })
          expect(rotated.identity_key).not.toBe(other.keys.payment_button.test.identity_key)
          const disabled = yield* promise(() =>
            admin.admin.merchants.setStatus(other.merchant_id, { status: "DISABLED" })
          )
          expect(disabled).toEqual({ merchant_id: other.merchant_id, status: "DISABLED" })

          // --- panel users (Effect client: no Promise call) -------------------------------------
          const user = yield* operator.panelUsers.createPanelUser({
            path: { merchant_id: merchant },
            payload: { email: "cajero@tienda.co", password: "a long enough password", role: "full_access" }
          })
          expect(user).toMatchObject({
            merchant_id: merchant,
            email: "cajero@tienda.co",
            role: "full_access"
          })
          const users = yield* operator.panelUsers.listPanelUsers({
            path: { merchant_id: merchant },
            urlParams: {}
          })
          expect(users.data.map((u) => u.id)).toEqual([user.user_id])
          const patched = yield* operator.panelUsers.patchPanelUser({
            path: { merchant_id: merchant, user_id: user.user_id },
            payload: { role: "read_only" }
          })
          expect(patched).toMatchObject({ id: user.user_id, role: "read_only", status: "ACTIVE" })

          // --- the transparency log --------------------------------------------------------------
          const audit = new Cobro({ baseUrl: url })
          const key = yield* promise(() => audit.audit.publicKey())
          const latest = yield* promise(() =>
            eventually(30_000, () => audit.audit.latestCheckpoint().catch(() => undefined))
          )
          const [origin, size] = latest.split("\n")
          expect(key.startsWith(`${origin}+`)).toBe(true)
          const treeSize = Number(size)
          expect(treeSize).toBeGreaterThan(1)
          expect(yield* promise(() => audit.audit.checkpointAt(treeSize))).toBe(latest)
          const consistency = yield* promise(() => audit.audit.consistencyProof({ from: 1, to: treeSize }))
          expect(consistency).toMatchObject({ from: 1, to: treeSize })
          const first = (yield* promise(() => admin.admin.events.page({ limit: 1 }))).data[0]!
          const inclusion = yield* promise(() =>
            admin.audit.inclusionProof({ event_id: first.event_id, tree_size: treeSize })
          )
          expect(inclusion).toMatchObject({ event_id: first.event_id, leaf_index: 0, tree_size: treeSize })

          // --- every endpoint answered 2xx --------------------------------------------------------
          const routes = routesOf()
          const answered = new Set<string>()
          const unmatched: Array<string> = []
          for (const request of proxy.answered) {
            const route = routeOf(routes, request.method, request.path)
            if (route === undefined) unmatched.push(`${request.method} ${request.path}`)
            else if (request.status >= 200 && request.status < 300) answered.add(route.name)
          }
          const missing = routes
            .filter((route) => !answered.has(route.name))
            .map((route) => `${route.name} (${route.method} ${route.template})`)
          expect(unmatched, "requests that reached no endpoint of the contract").toEqual([])
          expect(missing, `endpoints never answered 2xx:\n${missing.join("\n")}`).toEqual([])
          expect(answered.size).toBe(routes.length)
        }).pipe(Effect.provide(FetchHttpClient.layer))
    )

    it.effect(
      "a path parameter is sent as one segment: an intent whose reference_id has / ? # % and a space is read back (C2, C5) and its refund status (C9) and history found",
      () =>
        Effect.gen(function* () {
          const server = yield* CobroServer.CobroServer
          const admin = new Cobro({ baseUrl: server.url, adminToken: server.adminToken })
          const { merchant, keys } = yield* promise(() =>
            givenMerchant(admin, { name: "Tienda Rara", serial: "SN-EVERY-2" })
          )
          const button = new Cobro({ baseUrl: server.url, apiKey: keys.payment_button.test.identity_key })
          // The contract allows any text but NUL in a reference_id (C1).
          const reference = "pedido/7?x=1#a 100%"
          yield* promise(() =>
            button.online.intents.create({
              reference_id: reference,
              amount: { currency: "COP", total_amount: 15_000 }
            })
          )
          expect((yield* promise(() => button.online.intents.retrieve(reference))).reference_id).toBe(
            reference
          )
          // The Effect client underneath, the same.
          const read = yield* button.client.online.readIntent({ path: { reference_id: reference } })
          expect(read.reference_id).toBe(reference)
          const transactionId = transactionOf(
            yield* promise(() => button.online.payments.create(cardAttempt(reference)))
          )
          const payment = yield* promise(() =>
            eventually(30_000, async () => {
              const read = await button.online.payments.retrieve(reference)
              return read.status === "RUNNING" ? undefined : read
            })
          )
          expect(payment).toMatchObject({ reference_id: reference, status: "APPROVED" })
          yield* promise(() =>
            button.online.refunds.create({ reference_id: reference, transaction_id: transactionId })
          )
          expect((yield* promise(() => button.online.refunds.retrieve(transactionId))).payload.status).toBe(
            "PROCESSING"
          )
          // The intent's stream id names the reference: `MER_…:test:<reference_id>`.
          const history = yield* promise(() => admin.admin.history(`${merchant}:test:${reference}`))
          expect(history.events[0]!.type).toBe("IntentCreated")
        })
    )
  }
)
