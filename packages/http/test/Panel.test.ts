/**
 * The merchant panel's pages (issue 22, "The merchant panel") through the real handler on a socket,
 * without a browser: sign-in, each page with the merchant's data, each change recorded with the
 * panel user as actor, a `read_only` user and a missing or wrong CSRF token refused on every
 * mutating route with nothing changed, no session sent to the sign-in page, the languages, and
 * escaping of what merchants and payers typed.
 */
import { describe, expect, it } from "@effect/vitest"
import * as CommandHandler from "@cobro/domain/CommandHandler"
import * as EventStore from "@cobro/domain/EventStore"
import { NotificationId } from "@cobro/domain/Ids"
import * as PanelUser from "@cobro/domain/PanelUser"
import * as TestNotification from "@cobro/domain/TestNotification"
import * as WebhookDelivery from "@cobro/domain/WebhookDelivery"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Html from "@cobro/panel/PanelHtml"
import * as PanelPage from "@cobro/panel/PanelPage"
import * as Bodies from "./support/Bodies.js"
import * as Calls from "./support/Calls.js"
import * as Notifications from "./support/Notifications.js"
import * as PanelBrowser from "./support/PanelBrowser.js"
import * as TestApp from "./support/TestApp.js"
import * as TestClock from "./support/TestClock.js"

const PASSWORD = TestApp.PANEL_PASSWORD

/** A signed-in browser of the user `email` of the merchant. */
interface Browser extends PanelBrowser.Browser {
  readonly email: string
  readonly merchantId: string
}

const { loginForm, postLogin } = PanelBrowser

/** Creates a panel user of the merchant (admin API) and signs it in through the sign-in form. */
const signedIn = (
  merchantId: string,
  role: "full_access" | "read_only" = "full_access",
  email = `${role}@cafe.example`
) =>
  Effect.gen(function* () {
    yield* TestApp.createPanelUser(merchantId, email, role)
    const browser = yield* PanelBrowser.signIn(email)
    return { email, merchantId, ...browser } satisfies Browser
  })

const get = (path: string, browser?: Browser, headers: Record<string, string> = {}) =>
  TestApp.send("GET", path, { headers: { ...(browser ? { cookie: browser.cookie } : {}), ...headers } })

/** A form posted by `browser` with its CSRF token (unless `csrf` says otherwise: `null` leaves it out). */
const post = (
  path: string,
  browser: Browser | undefined,
  fields: Record<string, string> = {},
  csrf?: string | null
) =>
  Calls.postForm(
    path,
    {
      ...(csrf === null || browser === undefined ? {} : { csrf: csrf ?? browser.csrf }),
      ...fields
    },
    browser ? { cookie: browser.cookie } : {}
  )

const page = (reply: TestApp.Reply, status = 200) => {
  TestApp.expectPage(reply, status)
  return reply.text
}

/** Checks that a page's text holds each of `parts`. */
const expectShows = (text: string, parts: ReadonlyArray<string>) => {
  for (const part of parts) expect(text).toContain(part)
}

/** A panel user of the merchant, created through the admin API. */
const givenUser = (merchantId: string, email = "ana@cafe.example") =>
  Effect.asVoid(TestApp.createPanelUser(merchantId, email))

/** A merchant whose user ana@cafe.example is not signed in yet. */
const merchantWithUser = Effect.tap(TestApp.createMerchant(), (m) => givenUser(m.merchantId))

/** The merchant `create` makes, and its full-access user signed in. */
const signedInMerchant = <M extends TestApp.MerchantKeys>(create: Effect.Effect<M, never, any>) =>
  Effect.gen(function* () {
    const m = yield* create
    return { m, browser: yield* signedIn(m.merchantId) }
  })

/** A sign-in post refused for its missing, wrong or foreign token: 403, the form's message, no session. */
const expectForged = (reply: TestApp.Reply, what: string) => {
  expect(reply.status, what).toBe(403)
  TestApp.expectPage(reply, 403)
  expect(reply.text, what).toContain("Formulario vencido")
  expect(reply.headers["set-cookie"] ?? "", what).not.toMatch(/cobro_panel=/)
}

/** The events of a stream. */
const streamOf = (id: string) => Effect.flatMap(EventStore.EventStore, (store) => store.readStream(id))

/** The events of the whole log, in order. */
const allEvents = Effect.flatMap(EventStore.EventStore, (store) => store.readAll({ limit: 1_000_000 }))

/** The log's events after the first `from`. */
const eventsSince = (from: number) => Effect.map(allEvents, (events) => events.slice(from))

/** A merchant with a terminal (SN-0001, selected for the API) and CREDIT_CARD links from 1,000 to 5,000,000. */
const merchantWithTerminal = () => TestApp.createMerchantWithTerminal()

/** A3 on the sandbox terminal (auto-approved by the simulator): the sale's transaction id. */
const sale = (key: string, serial: string, overrides: Record<string, unknown> = {}) =>
  Effect.gen(function* () {
    const created = yield* Calls.checkout(
      key,
      Bodies.terminalSale(serial, { amount: Bodies.saleAmountIva19, ...overrides })
    )
    expect(created.status, created.text).toBe(201)
    const integrationId = created.json.payload.integration_id as string
    const [first] = yield* streamOf(`TerminalCheckout-${integrationId}`)
    return { integrationId, transactionId: (first!.data as { transactionId: string }).transactionId }
  })

const deliveries = CommandHandler.make(WebhookDelivery.WebhookDelivery)

const notified = Notifications.notified

const NOTIFICATION = "0b6f3c1e-6d1a-4c1f-9a53-2f1c8a0e7d41"

describe("the merchant panel", { timeout: 120_000 }, () => {
  describe("signing in", () => {
    it.live(
      "the sign-in page has labelled email and password fields and a submit button, in Spanish unless the browser asks for English",
      TestApp.fresh(function* () {
        const spanish = page(yield* get("/panel/login"))
        expect(spanish).toContain('<html lang="es">')
        expect(spanish).toContain('<label class="text" for="email">Correo electrónico</label>')
        expect(spanish).toMatch(/<input type="email" id="email" name="email"[^>]*autocomplete="username"/)
        expect(spanish).toContain('<label class="text" for="password">Contraseña</label>')
        expect(spanish).toMatch(/<input type="password" id="password" name="password"/)
        expect(spanish).toContain('<button type="submit" class="primary" id="sign-in">Ingresar</button>')
        const english = page(yield* get("/panel/login", undefined, { "accept-language": "en-US,en;q=0.9" }))
        expect(english).toContain('<html lang="en">')
        expect(english).toContain('<label class="text" for="password">Password</label>')
        const switched = page(yield* get("/panel/login?lang=es", undefined, { "accept-language": "en" }))
        expect(switched).toContain('<html lang="es">')
      })
    )

    it.live(
      "a wrong password is refused (401) with one message for both halves; the right one sets the session cookie and goes to the payments (303)",
      TestApp.given(merchantWithUser, function* () {
        const wrong = yield* postLogin({
          email: "ana@cafe.example",
          password: "not the password"
        })
        expectShows(page(wrong, 401), [
          'id="sign-in-error"',
          "El correo o la contraseña no son correctos.",
          'value="ana@cafe.example"'
        ])
        expect(wrong.headers["set-cookie"]).toBeUndefined()
        const unknown = yield* postLogin({
          email: "nobody@cafe.example",
          password: PASSWORD
        })
        expect(page(unknown, 401)).toContain("El correo o la contraseña no son correctos.")
        const right = yield* postLogin({ email: "ana@cafe.example", password: PASSWORD })
        expect(right.status).toBe(303)
        expect(right.headers.location).toBe("/panel/payments")
        expect(right.headers["set-cookie"]).toMatch(
          /^cobro_panel=[A-Za-z0-9_-]{43}; .*HttpOnly; SameSite=Lax/
        )
      })
    )

    it.live(
      "a throttled sign-in shows how long to wait (429 with Retry-After)",
      TestApp.given(merchantWithUser, function* () {
        let last: TestApp.Reply | undefined
        for (let i = 0; i < 12 && last?.status !== 429; i++) {
          last = yield* postLogin({
            email: "ana@cafe.example",
            password: "wrong password!"
          })
        }
        const text = page(last!, 429)
        const seconds = Number(last!.headers["retry-after"])
        expect(seconds).toBeGreaterThan(0)
        expect(text).toContain(`data-retry-after="${seconds}"`)
        expect(text).toMatch(/Demasiados intentos fallidos\. Espera \d+ segundos?/)
      })
    )

    it.live(
      "GET /panel goes to the payments; sign-out ends the session: the old cookie opens nothing",
      TestApp.given(signedInMerchant(TestApp.createMerchant()), function* ({ browser }) {
        const root = yield* get("/panel", browser)
        expect(root.status).toBe(303)
        expect(root.headers.location).toBe("/panel/payments")
        const out = yield* post("/panel/logout", browser)
        expect(out.status).toBe(303)
        expect(out.headers.location).toBe("/panel/login")
        expect(out.headers["set-cookie"]).toMatch(/^cobro_panel=; Max-Age=0/)
        const after = yield* get("/panel/payments", browser)
        expect(after.status).toBe(303)
        expect(after.headers.location).toMatch(/^\/panel\/login\?next=/)
      })
    )

    it.live(
      "without a session every page answers 303 to the sign-in page, and every form too, changing nothing",
      TestApp.fresh(function* () {
        const pages = PanelPage.routes.filter(
          (r) => r.method === "GET" && r.path !== "/panel" && r.path !== "/panel/login"
        )
        for (const route of pages) {
          const path = route.path
            .replace(":transaction_id", "TRX_1")
            .replace(":notification_id", NOTIFICATION)
            .replace(":link_id", "LNK_1")
            .replace(":integration", "terminal_api")
            .replace(":mode", "test")
            .replace(":webhook_mode", "test")
          const reply = yield* get(path)
          expect(reply.status, path).toBe(303)
          expect(reply.headers.location, path).toBe(`/panel/login?next=${encodeURIComponent(path)}`)
        }
        const before = yield* TestApp.logSize
        for (const route of [...PanelPage.MUTATING_ROUTES, { method: "POST", path: "/panel/logout" }]) {
          const reply = yield* post(route.path.replace(/:[a-z_]+/g, "x"), undefined, { csrf: "x" })
          expect(reply.status, route.path).toBe(303)
          expect(reply.headers.location, route.path).toBe("/panel/login")
        }
        expect(yield* TestApp.logSize).toBe(before)
      })
    )

    it.live(
      "a page asked before signing in is where the sign-in leads; an address outside the panel is not",
      TestApp.given(merchantWithUser, function* () {
        const form = page(yield* get("/panel/login?next=%2Fpanel%2Fwebhooks%3Fmode%3Dtest"))
        expect(form).toContain('name="next" value="/panel/webhooks?mode=test"')
        const back = yield* postLogin({
          email: "ana@cafe.example",
          password: PASSWORD,
          next: "/panel/webhooks?mode=test"
        })
        expect(back.headers.location).toBe("/panel/webhooks?mode=test")
        for (const next of [
          "https://evil.example/",
          "//evil.example/panel/",
          "/\\evil.example",
          "/checkout/x",
          "/panel/../checkout/x",
          "/panel/%2E%2e/checkout/x"
        ]) {
          const reply = yield* postLogin({
            email: "ana@cafe.example",
            password: PASSWORD,
            next
          })
          expect(reply.headers.location, next).toBe("/panel/payments")
        }
      })
    )

    it.live(
      "GET /panel/login sets cobro_panel_login (an hour, HttpOnly, SameSite=Strict, Path=/panel/login) holding the form's csrf token; the browser keeps it across loads; a sign-in expires it",
      TestApp.given(merchantWithUser, function* () {
        const first = yield* TestApp.send("GET", "/panel/login")
        const [, token] =
          /^cobro_panel_login=([0-9]+\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}); Max-Age=3600; Path=\/panel\/login; HttpOnly; SameSite=Strict$/.exec(
            first.headers["set-cookie"] ?? ""
          )!
        expect(page(first)).toContain(`<input type="hidden" name="csrf" value="${token}">`)
        // Another browser gets another token; the same browser (another tab) keeps its own.
        const other = yield* loginForm()
        expect(other.csrf).not.toBe(token)
        const again = yield* get("/panel/login", undefined, { cookie: `cobro_panel_login=${token}` })
        expect(again.headers["set-cookie"]).toMatch(new RegExp(`^cobro_panel_login=${token}; Max-Age=3600;`))
        expect(page(again)).toContain(`name="csrf" value="${token}"`)
        // Secure exactly when the session's cookie is.
        const https = yield* get("/panel/login", undefined, { "x-forwarded-proto": "https" })
        expect(https.headers["set-cookie"]).toMatch(/; HttpOnly; Secure; SameSite=Strict$/)
        // A refusal shows the form again with the same token; a sign-in expires the cookie.
        const form = { cookie: `cobro_panel_login=${token}`, csrf: token! }
        const wrong = yield* postLogin({ email: "ana@cafe.example", password: "not the password" }, form)
        expect(page(wrong, 401)).toContain(`name="csrf" value="${token}"`)
        const right = yield* postLogin({ email: "ana@cafe.example", password: PASSWORD }, form)
        expect(right.status).toBe(303)
        expect(right.headers["set-cookie"]).toMatch(
          /^cobro_panel=[A-Za-z0-9_-]{43}; .*, cobro_panel_login=; Max-Age=0; Path=\/panel\/login; HttpOnly; SameSite=Strict$/
        )
      })
    )

    it.live(
      "a sign-in post without the form's token (no field, no cookie, neither) is refused with 403 and nobody is signed in",
      TestApp.given(merchantWithUser, function* () {
        const form = yield* loginForm()
        const credentials = { email: "ana@cafe.example", password: PASSWORD }
        for (const [what, reply] of [
          ["no field", yield* Calls.postForm("/panel/login", credentials, { cookie: form.cookie })],
          ["no cookie", yield* Calls.postForm("/panel/login", { ...credentials, csrf: form.csrf })],
          ["neither", yield* Calls.postForm("/panel/login", credentials)],
          ["empty", yield* postLogin(credentials, { cookie: "cobro_panel_login=", csrf: "" })]
        ] as const) {
          expectForged(reply, what)
        }
      })
    )

    it.live(
      "a sign-in post with a wrong token, or with another browser's (cookie of one, field of the other), is refused with 403",
      TestApp.given(merchantWithUser, function* () {
        const mine = yield* loginForm()
        const theirs = yield* loginForm()
        const credentials = { email: "ana@cafe.example", password: PASSWORD }
        const flipped = `${mine.csrf.slice(0, -1)}${mine.csrf.endsWith("A") ? "B" : "A"}`
        for (const [what, csrf] of [
          ["another browser's", theirs.csrf],
          ["a flipped byte", flipped],
          ["a longer one", `${mine.csrf}A`],
          ["a made-up one", "A".repeat(43)]
        ] as const) {
          expectForged(yield* postLogin(credentials, { cookie: mine.cookie, csrf }), what)
        }
        // The attacker's own form (cookie and field its own) is no use in the victim's browser.
        expectForged(yield* postLogin(credentials, { cookie: mine.cookie, csrf: theirs.csrf }), "swapped")
        expect((yield* postLogin(credentials, mine)).status).toBe(303)
      })
    )

    it.live(
      "a cookie and field an attacker planted, the same value in both, are refused with 403 unless the server made the token (HMAC)",
      TestApp.given(merchantWithUser, function* () {
        const credentials = { email: "ana@cafe.example", password: PASSWORD }
        const genuine = (yield* loginForm()).csrf
        const [issued, nonce, mac] = genuine.split(".") as [string, string, string]
        const otherMac = `${mac.slice(0, -1)}${mac.endsWith("A") ? "B" : "A"}`
        for (const [what, planted] of [
          ["a made-up value of the old shape", "A".repeat(43)],
          ["a made-up token", `${issued}.${"B".repeat(22)}.${"C".repeat(43)}`],
          ["a genuine token with another nonce", `${issued}.${"B".repeat(22)}.${mac}`],
          ["a genuine token with a changed HMAC", `${issued}.${nonce}.${otherMac}`],
          ["a genuine token issued earlier", `${Number(issued) - 3600}.${nonce}.${mac}`]
        ] as const) {
          expectForged(
            yield* postLogin(credentials, { cookie: `cobro_panel_login=${planted}`, csrf: planted }),
            what
          )
        }
        // A planted value the form is loaded with is replaced by a genuine one.
        const reloaded = yield* get("/panel/login", undefined, {
          cookie: `cobro_panel_login=${"A".repeat(43)}`
        })
        expect(reloaded.headers["set-cookie"]).toMatch(/^cobro_panel_login=[0-9]+\./)
        expect(
          (yield* postLogin(credentials, { cookie: `cobro_panel_login=${genuine}`, csrf: genuine })).status
        ).toBe(303)
      })
    )

    it.live(
      "a sign-in post from another origin is refused with 403 even with the right token; Cobro's own (Host, X-Forwarded-Proto) is taken",
      TestApp.given(merchantWithUser, function* () {
        const credentials = { email: "ana@cafe.example", password: PASSWORD }
        for (const [what, headers] of [
          ["another site", { host: "cobro.test", origin: "https://evil.example" }],
          ["another port", { host: "cobro.test", origin: "http://cobro.test:8080" }],
          ["another scheme", { host: "cobro.test", origin: "https://cobro.test" }],
          ["a sub-domain", { host: "cobro.test", origin: "http://evil.cobro.test" }],
          ["an opaque origin", { host: "cobro.test", origin: "null" }],
          ["not an origin", { host: "cobro.test", origin: "cobro.test" }]
        ] as const) {
          expectForged(yield* postLogin(credentials, undefined, headers), what)
        }
        const own = yield* postLogin(credentials, undefined, {
          host: "cobro.test",
          origin: "http://COBRO.test"
        })
        expect(own.status, own.text).toBe(303)
        const behindTls = yield* postLogin(credentials, undefined, {
          host: "cobro.test",
          "x-forwarded-proto": "https",
          origin: "https://cobro.test"
        })
        expect(behindTls.status, behindTls.text).toBe(303)
      })
    )

    it.live(
      "no refused sign-in post checks the password, records an event or counts as a failed sign-in: the right password then signs in at once",
      TestApp.given(merchantWithUser, function* () {
        const mine = yield* loginForm()
        const theirs = yield* loginForm()
        const before = yield* TestApp.logSize
        // Past the account's free failures (4) and the address's (10), had they been counted.
        for (let round = 0; round < 3; round++) {
          for (const password of ["wrong password!", PASSWORD]) {
            const credentials = { email: "ana@cafe.example", password }
            expectForged(
              yield* Calls.postForm("/panel/login", credentials, { cookie: mine.cookie }),
              "missing"
            )
            expectForged(
              yield* postLogin(credentials, { cookie: mine.cookie, csrf: "A".repeat(43) }),
              "wrong"
            )
            expectForged(yield* postLogin(credentials, { cookie: mine.cookie, csrf: theirs.csrf }), "theirs")
            expectForged(yield* postLogin(credentials, mine, { origin: "https://evil.example" }), "origin")
          }
        }
        expect(yield* TestApp.logSize).toBe(before)
        const right = yield* postLogin({ email: "ana@cafe.example", password: PASSWORD }, mine)
        expect(right.status, right.text).toBe(303)
        const types = (yield* streamOf(`PanelUser-${PanelUser.userIdOf("ana@cafe.example")}`)).map(
          (e) => e.type
        )
        expect(types).toEqual(["PanelUserCreated", "SignedIn"])
      })
    )
  })

  describe("payments", () => {
    it.live(
      "the list shows the mode's transactions newest first with reference, kind, amount and status; the switch shows the other mode",
      TestApp.given(signedInMerchant(merchantWithTerminal()), function* ({ m, browser }) {
        const first = yield* sale(m.terminal.test, m.serial, { reference: "order-1" })
        const second = yield* sale(m.terminal.test, m.serial, { reference: "order-2" })
        const production = page(yield* get("/panel/payments", browser))
        expect(production).toContain('id="payments-empty"')
        expect(production).toContain(
          'id="mode-production" class="production" href="/panel/payments" aria-current="true"'
        )
        const test = page(yield* get("/panel/payments?mode=test", browser))
        expect(test).toContain('id="test-mode-banner"')
        const rows = [
          ...test.matchAll(
            /data-testid="payment-row" data-transaction-id="([^"]+)" data-kind="([^"]+)" data-status="([^"]+)"/g
          )
        ]
        expect(rows.map((r) => [r[1], r[2], r[3]])).toEqual([
          [second.transactionId, "terminal", "APPROVED"],
          [first.transactionId, "terminal", "APPROVED"]
        ])
        expect(test).toContain("order-2")
        expect(test).toContain("$ 11.900")
        expect(test).toContain(
          `href="/panel/payments/${first.transactionId}?mode=test&amp;kind=terminal&amp;resource=${first.integrationId}"`
        )
      })
    )

    it.live(
      "filters: reference (prefix), status, kind and Bogotá days; a bad day is shown beside its field",
      TestApp.given(signedInMerchant(merchantWithTerminal()), function* ({ m, browser }) {
        const a = yield* sale(m.terminal.test, m.serial, { reference: "order-1" })
        const b = yield* sale(m.terminal.test, m.serial, { reference: "invoice-9" })
        const ids = (text: string) =>
          [...text.matchAll(/data-transaction-id="(TRX_[^"]+)"/g)].map((r) => r[1])
        const list = (query: string) =>
          Effect.map(get(`/panel/payments?mode=test&${query}`, browser), (r) => page(r))
        expect(ids(yield* list("reference=order"))).toEqual([a.transactionId])
        expect(ids(yield* list("reference=invoice-9"))).toEqual([b.transactionId])
        expect(ids(yield* list("status=APPROVED"))).toEqual([b.transactionId, a.transactionId])
        expect(ids(yield* list("status=REJECTED"))).toEqual([])
        expect(ids(yield* list("kind=link"))).toEqual([])
        expect(ids(yield* list("kind=terminal"))).toEqual([b.transactionId, a.transactionId])
        // The clock reads 2026-11-21T15:00Z, 10:00 in Bogotá.
        expect(ids(yield* list("created_from=2026-11-21&created_to=2026-11-21"))).toEqual([
          b.transactionId,
          a.transactionId
        ])
        expect(ids(yield* list("created_from=2026-11-22"))).toEqual([])
        expect(ids(yield* list("created_to=2026-11-20"))).toEqual([])
        const bad = yield* list("created_from=2026-02-30")
        expect(bad).toContain('id="created_from-error"')
        expect(ids(bad)).toEqual([b.transactionId, a.transactionId])
        expect(bad).toContain('<option value="APPROVED">APPROVED</option>')
      })
    )

    it.live(
      "newer and older links walk the list a page at a time, every row once",
      TestApp.given(signedInMerchant(merchantWithTerminal()), function* ({ m, browser }) {
        const made: Array<string> = []
        for (let i = 0; i < 23; i++) {
          made.unshift((yield* sale(m.terminal.test, m.serial, { reference: `r-${i}` })).transactionId)
          yield* Effect.flatMap(TestClock.VirtualTime, (time) => time.advance(1000))
        }
        const ids = (text: string) =>
          [...text.matchAll(/data-transaction-id="(TRX_[^"]+)"/g)].map((r) => r[1]!)
        const link = (text: string, id: string) => {
          const match = new RegExp(`id="${id}" rel="[a-z]+" href="([^"]+)"`).exec(text)
          return match === null ? undefined : match[1]!.replace(/&amp;/g, "&")
        }
        const first = page(yield* get("/panel/payments?mode=test", browser))
        expect(ids(first)).toEqual(made.slice(0, 20))
        expect(link(first, "page-newer")).toBeUndefined()
        const olderHref = link(first, "page-older")!
        expect(olderHref).toBe(`/panel/payments?mode=test&starting_after=${made[19]}`)
        const second = page(yield* get(olderHref, browser))
        expect(ids(second)).toEqual(made.slice(20))
        expect(link(second, "page-older")).toBeUndefined()
        const back = page(yield* get(link(second, "page-newer")!, browser))
        expect(ids(back)).toEqual(made.slice(0, 20))
        expect(link(back, "page-newer")).toBeUndefined()
        const unknown = yield* get("/panel/payments?mode=test&starting_after=TRX_nope", browser)
        expect(page(unknown, 400)).toContain('id="message"')
      })
    )

    it.live(
      "a payment's page: state, amounts, card summary, each notification with every attempt, and every event with time, actor and the state after it",
      TestApp.given(signedInMerchant(merchantWithTerminal()), function* ({ m, browser }) {
        const s = yield* sale(m.terminal.test, m.serial, { reference: "order-42" })
        yield* notified(m.merchantId, s.transactionId, NOTIFICATION, 500, "<b>down</b>")
        const path = `/panel/payments/${s.transactionId}?mode=test&kind=terminal&resource=${s.integrationId}`
        const text = page(yield* get(path, browser))
        expect(text).toContain(`<code id="transaction-id">${s.transactionId}</code>`)
        expect(text).toContain('id="payment-status" data-status="APPROVED"')
        expect(text).toContain('<dd id="payment-amount">$ 11.900</dd>')
        expect(text).toContain('<dd id="payment-reference">order-42</dd>')
        expect(text).toMatch(
          /<dl id="card-summary"><dt>Número<\/dt><dd data-fact="maskedPan">\d{6}\*+\d{4}<\/dd>/
        )
        expect(text).toContain(
          `data-testid="delivery" data-notification-id="${NOTIFICATION}" data-status="PENDING"`
        )
        expect(text).toContain('data-testid="attempt" data-attempt="1" data-delivered="false"')
        expect(text).toContain('<span data-testid="status-code">500</span>')
        expect(text).toContain('<td class="num" data-testid="latency">87 ms</td>')
        expect(text).toContain('<code data-testid="snippet">&lt;b&gt;down&lt;/b&gt;</code>')
        const history = [
          ...text.matchAll(/data-testid="history-event" data-type="([^"]+)" data-actor="([^"]*)"/g)
        ]
        expect(history.map((h) => h[1])).toEqual([
          "CheckoutCreated",
          "PushAttempted",
          "CheckoutSent",
          "SaleApproved"
        ])
        const recorded = yield* streamOf(`TerminalCheckout-${s.integrationId}`)
        expect(history.map((h) => h[2])).toEqual(recorded.map((e) => e.metadata.actor ?? ""))
        expect(text).toContain("<summary>APPROVED</summary>")
        expect(text).toContain(`&quot;transactionId&quot;: &quot;${s.transactionId}&quot;`)
      })
    )

    it.live(
      "a link payment and an online payment have their pages: the payment's own status, the link's history, the card of the online one",
      TestApp.given(signedInMerchant(merchantWithTerminal()), function* ({ m, browser }) {
        // An OPEN link: the sandbox declines 555042 (the fraud engine), approves 50000.
        const link = yield* Calls.newLink(m.button.test, { amount_type: "OPEN" })
        const declined = yield* Calls.postForm(link.path, Bodies.cardForm({ amount: "555042" }))
        expect(declined.status, declined.text).toBe(303)
        const paid = yield* Calls.postForm(link.path, Bodies.cardForm({ amount: "50000" }))
        expect(paid.status, paid.text).toBe(303)
        expect((yield* Calls.createIntent(m.button.test, Bodies.intent("order-online", 20_000))).status).toBe(
          201
        )
        const attempt = yield* Calls.attempt(m.button.test, Bodies.cardAttempt("order-online"))
        expect(attempt.status, attempt.text).toBe(201)
        const list = page(yield* get("/panel/payments?mode=test", browser))
        const rows = [
          ...list.matchAll(/data-transaction-id="(TRX_[^"]+)" data-kind="([^"]+)" data-status="([^"]+)"/g)
        ]
        const online = rows.find((r) => r[2] === "online")!
        const links = rows.filter((r) => r[2] === "link")
        expect(links.map((r) => r[3]).sort()).toEqual(["PAID", "REJECTED"])
        for (const [, transactionId, , status] of links) {
          const text = page(
            yield* get(`/panel/payments/${transactionId}?mode=test&kind=link&resource=${link.id}`, browser)
          )
          expect(text).toContain(`id="payment-status" data-status="${status}"`)
          expect(text).toContain('<dd data-fact="linkStatus">PAID</dd>')
          expect(text).toContain(`<dd id="payment-amount">$ ${status === "PAID" ? "50.000" : "555.042"}</dd>`)
          expect(text).toContain('id="card-summary-empty"')
          const types = [...text.matchAll(/data-testid="history-event" data-type="([^"]+)"/g)].map(
            (h) => h[1]
          )
          expect(types).toEqual([
            "LinkCreated",
            "LinkPaymentStarted",
            "LinkPaymentFailed",
            "LinkPaymentStarted",
            "LinkPaid"
          ])
        }
        const text = page(yield* get(`/panel/payments/${online![1]}?mode=test&kind=online`, browser))
        expect(text).toContain('<dd id="payment-reference">order-online</dd>')
        expect(text).toContain('<dd id="payment-amount">$ 20.000</dd>')
        expect(text).toContain('<dd data-fact="maskedPan">411111******1111</dd>')
        expect(text).toContain('<dd data-fact="cardholder">ANA GOMEZ</dd>')
        expect(text).toContain('data-testid="history-event" data-type="PaymentStarted"')
      })
    )

    it.live(
      "re-send: the notification is due again, recorded with the panel user as actor, and the page says so",
      TestApp.given(merchantWithTerminal(), function* (m) {
        yield* TestApp.setTestWebhook(m.merchantId)
        const browser = yield* signedIn(m.merchantId)
        const s = yield* sale(m.terminal.test, m.serial)
        yield* notified(m.merchantId, s.transactionId, NOTIFICATION, 200)
        const detail = `/panel/payments/${s.transactionId}?mode=test&kind=terminal&resource=${s.integrationId}`
        const text = page(yield* get(detail, browser))
        expect(text).toContain(`id="resend-${NOTIFICATION}"`)
        const reply = yield* post(`/panel/notifications/${NOTIFICATION}/resend`, browser, {
          return_to: detail
        })
        expect(reply.status, reply.text).toBe(303)
        expect(reply.headers.location).toBe(`${detail}&notice=resent`)
        const events = yield* streamOf(`WebhookDelivery-${NOTIFICATION}`)
        expect(events.at(-1)).toMatchObject({
          type: "ResendRequested",
          metadata: { actor: "panel:full_access@cafe.example" },
          data: { url: "http://merchant.example/test-hooks" }
        })
        const after = page(yield* get(reply.headers.location!, browser))
        expect(after).toContain('<p class="notice ok" id="flash" role="status">')
        const pending = page(yield* get(`/panel/notifications/${NOTIFICATION}`, browser))
        expect(pending).toContain('data-status="PENDING"')
        expect(pending).not.toContain(`id="resend-${NOTIFICATION}"`)
      })
    )

    it.live(
      "another merchant's payment, notification and link are not found (404), and the address must name the right resource",
      TestApp.given(merchantWithTerminal(), function* (m) {
        const s = yield* sale(m.terminal.test, m.serial)
        yield* notified(m.merchantId, s.transactionId, NOTIFICATION, 200)
        const link = yield* Calls.newLink(m.button.test, {
          amount_type: "CLOSE",
          amount: { total_amount: 5000 }
        })
        const other = yield* TestApp.createMerchant("Otra tienda")
        const stranger = yield* signedIn(other.merchantId, "full_access", "stranger@otra.example")
        const detail = `/panel/payments/${s.transactionId}?kind=terminal&resource=${s.integrationId}`
        expect((yield* get(detail, stranger)).status).toBe(404)
        expect((yield* get(`/panel/notifications/${NOTIFICATION}`, stranger)).status).toBe(404)
        expect((yield* get(`/panel/links/${link.id}/cancel`, stranger)).status).toBe(404)
        const before = yield* TestApp.logSize
        expect((yield* post(`/panel/notifications/${NOTIFICATION}/resend`, stranger)).status).toBe(404)
        expect((yield* post(`/panel/links/${link.id}/cancel`, stranger)).status).toBe(404)
        expect(yield* TestApp.logSize).toBe(before)
        const owner = yield* signedIn(m.merchantId)
        expect((yield* get(detail, owner)).status).toBe(200)
        expect(
          (yield* get(`/panel/payments/${s.transactionId}?kind=terminal&resource=INT_999`, owner)).status
        ).toBe(404)
        expect(
          (yield* get(`/panel/payments/TRX_999?kind=terminal&resource=${s.integrationId}`, owner)).status
        ).toBe(404)
        expect((yield* get(`/panel/payments/${s.transactionId}?kind=online`, owner)).status).toBe(404)
        expect((yield* get(`/panel/payments/${s.transactionId}`, owner)).status).toBe(404)
      })
    )
  })

  describe("links", () => {
    it.live(
      "a link made with the form is B2's: the list shows the URL B2 answers, and its events say panel:<email>",
      TestApp.given(signedInMerchant(merchantWithTerminal()), function* ({ m, browser }) {
        const form = page(yield* get("/panel/links/new?mode=test", browser))
        expect(form).toContain('id="amount_type-CLOSE" value="CLOSE" checked')
        expect(form).toContain('id="payment_methods-CREDIT_CARD" value="CREDIT_CARD"')
        const reply = yield* post("/panel/links", browser, {
          mode: "test",
          amount_type: "CLOSE",
          total_amount: "50.000",
          currency: "COP",
          description: "Dos cafés",
          reference: "pedido-7",
          expiration_date: "2026-11-30T18:00",
          payment_methods: "CREDIT_CARD"
        })
        expect(reply.status, reply.text).toBe(303)
        const linkId = /created=(LNK_[A-Za-z0-9]+)/.exec(reply.headers.location!)![1]!
        expect(reply.headers.location).toBe(`/panel/links?mode=test&created=${linkId}&notice=linkCreated`)
        const [created] = yield* streamOf(`PaymentLink-${linkId}`)
        expect(created).toMatchObject({
          type: "LinkCreated",
          metadata: { actor: "panel:full_access@cafe.example" },
          data: {
            sandbox: true,
            reference: "pedido-7",
            description: "Dos cafés",
            paymentMethods: ["CREDIT_CARD"]
          }
        })
        // 18:00 in Bogotá is 23:00 UTC.
        expect(String((created!.data as { expiresAt: unknown }).expiresAt)).toBe(
          String(BigInt(Date.UTC(2026, 10, 30, 23, 0)) * 1_000_000n)
        )
        const record = yield* Calls.readLink(m.button.test, linkId)
        expect(record.json).toMatchObject({ total: 50000, status: "ACTIVE", is_sandbox: true })
        const list = page(yield* get(reply.headers.location!, browser))
        const url = /id="created-link-url" value="([^"]+)"/.exec(list)![1]!
        expect(url).toMatch(new RegExp(`^http://[^/]+/checkout/${linkId}$`))
        expect(list).toContain(`data-testid="link-row" data-link-id="${linkId}" data-status="ACTIVE"`)
        expect(list).toContain(`<a href="${url}" data-testid="link-url">`)
        expect(page(yield* get(new URL(url).pathname))).toContain("Dos cafés")
        const production = page(yield* get("/panel/links", browser))
        expect(production).not.toContain(linkId)
      })
    )

    it.live(
      "B2's errors show beside their fields, the form keeps what was typed, and nothing is recorded",
      TestApp.given(signedInMerchant(merchantWithTerminal()), function* ({ browser }) {
        const before = yield* TestApp.logSize
        const reply = yield* post("/panel/links", browser, {
          mode: "test",
          amount_type: "CLOSE",
          total_amount: "",
          description: "x",
          reference: "no spaces allowed",
          callback_url: "http://shop.example/back",
          payer_email: "not-an-email",
          image_url: "https://cdn.example/logo.gif",
          expiration_date: "2020-01-01T00:00"
        })
        const text = page(reply, 400)
        for (const field of [
          "total_amount",
          "description",
          "reference",
          "callback_url",
          "payer_email",
          "image_url"
        ]) {
          expect(text, field).toContain(`id="${field}-error" data-testid="field-error" data-field="${field}"`)
        }
        expect(text).toContain('value="no spaces allowed"')
        expect(text).toContain('id="error-summary"')
        expect(text).toContain("La referencia admite de 1 a 60 letras, dígitos, &#39;_&#39; o &#39;-&#39;.")
        expect(text).toContain(
          'data-api-message="expected 1 to 60 letters, digits, &#39;_&#39; or &#39;-&#39;"'
        )
        // B2's own use-case rules: a total outside every method's bounds, an expiry in the past.
        const rules = yield* post("/panel/links", browser, {
          mode: "test",
          amount_type: "CLOSE",
          total_amount: "10",
          expiration_date: "2020-01-01T00:00"
        })
        expectShows(page(rules, 400), [
          'id="total_amount-error"',
          "El valor está fuera de los límites de todos los medios de pago del enlace.",
          'id="expiration_date-error"',
          "La fecha de vencimiento debe ser futura."
        ])
        expect(yield* TestApp.logSize).toBe(before)
      })
    )

    it.live(
      "cancel asks first, then cancels an ACTIVE link with the panel user as actor; a cancelled link offers no cancel",
      TestApp.given(signedInMerchant(merchantWithTerminal()), function* ({ m, browser }) {
        const link = yield* Calls.newLink(m.button.test, {
          amount_type: "CLOSE",
          amount: { total_amount: 5000 }
        })
        const list = page(yield* get("/panel/links?mode=test", browser))
        expect(list).toContain(`id="cancel-${link.id}" href="/panel/links/${link.id}/cancel?mode=test"`)
        const before = yield* TestApp.logSize
        const confirm = page(yield* get(`/panel/links/${link.id}/cancel?mode=test`, browser))
        expect(confirm).toContain(`<form method="post" action="/panel/links/${link.id}/cancel">`)
        expect(confirm).toContain('id="confirm-button"')
        expect(yield* TestApp.logSize).toBe(before)
        const reply = yield* post(`/panel/links/${link.id}/cancel`, browser, { mode: "test" })
        expect(reply.status).toBe(303)
        expect(reply.headers.location).toBe("/panel/links?mode=test&notice=linkCancelled")
        expect((yield* streamOf(`PaymentLink-${link.id}`)).at(-1)).toMatchObject({
          type: "LinkCancelled",
          metadata: { actor: "panel:full_access@cafe.example" }
        })
        expect(yield* Calls.linkStatus(m.button.test, link.id)).toBe("CANCELLED")
        const after = page(yield* get("/panel/links?mode=test", browser))
        expect(after).toContain(`data-link-id="${link.id}" data-status="CANCELLED"`)
        expect(after).not.toContain(`id="cancel-${link.id}"`)
        const again = yield* get(`/panel/links/${link.id}/cancel?mode=test`, browser)
        expect(again.headers.location).toBe("/panel/links?mode=test&notice=notCancellable")
      })
    )
  })

  describe("integrations", () => {
    it.live(
      "revoke asks first, then shows the new pair once: the old identity key is refused, the new one works, the event says panel:<email>",
      TestApp.given(signedInMerchant(merchantWithTerminal()), function* ({ m, browser }) {
        const list = page(yield* get("/panel/integrations", browser))
        expectShows(list, [
          'data-testid="integration-row" data-integration="terminal_api" data-mode="test" data-active="true"',
          '<code id="identity-key-terminal_api-test">id_test_term_…</code>'
        ])
        expect(list).not.toContain(m.terminal.test)
        const confirm = page(yield* get("/panel/integrations/terminal_api/test/revoke", browser))
        expect(confirm).toContain('action="/panel/integrations/terminal_api/test/revoke"')
        const reply = yield* post("/panel/integrations/terminal_api/test/revoke", browser)
        const shown = page(reply)
        const identity = /id="new-identity-key" value="([^"]+)"/.exec(shown)![1]!
        const secret = /id="new-secret-key" value="([^"]+)"/.exec(shown)![1]!
        expect(identity).toMatch(/^id_test_term_/)
        expect(secret).toMatch(/^sk_test_term_/)
        expect(reply.headers["cache-control"]).toBe("no-store")
        const stream = yield* streamOf(`Merchant-${m.merchantId}`)
        expect(stream.at(-1)).toMatchObject({
          type: "KeyRotated",
          metadata: { actor: "panel:full_access@cafe.example" }
        })
        expect((yield* Calls.checkout(m.terminal.test, Bodies.terminalSale(m.serial))).status).toBe(401)
        expect(
          (yield* Calls.checkout(identity, Bodies.terminalSale(m.serial, { amount: Bodies.saleAmountIva19 })))
            .status
        ).toBe(201)
        const again = page(yield* get("/panel/integrations", browser))
        expect(again).not.toContain(identity)
        expect(again).not.toContain(secret)
      })
    )
  })

  describe("webhooks", () => {
    it.live(
      "production and test URLs are set with the admin API's rules, the error beside the field; Standard Webhooks opt-in; delete asks first",
      TestApp.given(signedInMerchant(TestApp.createMerchant()), function* ({ m, browser }) {
        const before = yield* TestApp.logSize
        const refused = yield* post("/panel/webhooks", browser, {
          webhook_mode: "production",
          url: "http://shop.example/hooks"
        })
        const text = page(refused, 400)
        expect(text).toContain('id="webhook-url-production-error"')
        expect(text).toContain(
          "El webhook de producción debe ser una dirección válida que empiece por https://."
        )
        expect(text).toContain('value="http://shop.example/hooks"')
        expect(yield* TestApp.logSize).toBe(before)
        const saved = yield* post("/panel/webhooks", browser, {
          webhook_mode: "production",
          url: "https://shop.example/hooks",
          standard_webhooks: "on"
        })
        expect(saved.status).toBe(303)
        expect(saved.headers.location).toBe("/panel/webhooks?notice=webhookSaved")
        yield* post("/panel/webhooks", browser, { webhook_mode: "test", url: "http://localhost:4000/hooks" })
        const stream = yield* streamOf(`Merchant-${m.merchantId}`)
        expect(
          stream
            .slice(-2)
            .map((e) => [
              e.type,
              e.metadata.actor,
              (e.data as any).url,
              (e.data as any).standardWebhooks ?? false
            ])
        ).toEqual([
          ["WebhookSet", "panel:full_access@cafe.example", "https://shop.example/hooks", true],
          ["WebhookSet", "panel:full_access@cafe.example", "http://localhost:4000/hooks", false]
        ])
        const shown = page(yield* get("/panel/webhooks", browser))
        expect(shown).toContain(
          '<code id="webhook-production-url">https://shop.example/hooks</code> <span class="badge ok" id="webhook-production-standard">'
        )
        expect(shown).toContain('<code id="webhook-test-url">http://localhost:4000/hooks</code>')
        expect(shown).toContain('id="standard-webhooks-production" value="on" checked')
        const confirm = page(yield* get("/panel/webhooks/test/delete", browser))
        expect(confirm).toContain('action="/panel/webhooks/test/delete"')
        const deleted = yield* post("/panel/webhooks/test/delete", browser)
        expect(deleted.headers.location).toBe("/panel/webhooks?notice=webhookDeleted")
        expect((yield* streamOf(`Merchant-${m.merchantId}`)).at(-1)).toMatchObject({
          type: "WebhookDeleted",
          metadata: { actor: "panel:full_access@cafe.example" }
        })
        expect(page(yield* get("/panel/webhooks", browser))).toContain('id="webhook-test-none"')
      })
    )

    it.live(
      "a test notification is a sandbox SALE_APPROVED scheduled to the test webhook, signed with the empty key, actor panel:<email>; without a webhook the page says so",
      TestApp.given(signedInMerchant(TestApp.createMerchant()), function* ({ browser }) {
        const before = yield* TestApp.logSize
        const none = yield* post("/panel/webhooks/test", browser)
        expect(none.headers.location).toBe("/panel/webhooks?notice=noTestWebhook")
        expect(yield* TestApp.logSize).toBe(before)
        yield* post("/panel/webhooks", browser, { webhook_mode: "test", url: "http://localhost:4000/hooks" })
        const count = (yield* allEvents).length
        const sent = yield* post("/panel/webhooks/test", browser)
        expect(sent.status).toBe(303)
        const id = /^\/panel\/notifications\/([0-9a-f-]{36})\?mode=test&notice=testSent$/.exec(
          sent.headers.location!
        )![1]!
        const [scheduled, ...rest] = yield* eventsSince(count)
        expect(rest).toEqual([])
        expect(scheduled).toMatchObject({
          streamId: `WebhookDelivery-${id}`,
          type: "DeliveryScheduled",
          metadata: { actor: "panel:full_access@cafe.example" },
          data: {
            url: "http://localhost:4000/hooks",
            type: "SALE_APPROVED",
            sandbox: true,
            signingKey: "EMPTY"
          }
        })
        const body = JSON.parse((scheduled!.data as { body: string }).body)
        expect(body).toMatchObject({
          id,
          type: "SALE_APPROVED",
          data: { metadata: { reference: TestNotification.TEST_REFERENCE } }
        })
        const shown = page(yield* get(sent.headers.location!, browser))
        expect(shown).toContain(`data-notification-id="${id}" data-status="PENDING"`)
        expect(shown).toContain('<code data-testid="delivery-url">http://localhost:4000/hooks</code>')
      })
    )

    it.live(
      "recent deliveries of the mode list the failed ones first",
      TestApp.given(signedInMerchant(TestApp.createMerchant()), function* ({ m, browser }) {
        const failedId = "0b6f3c1e-6d1a-4c1f-9a53-2f1c8a0e7d42"
        const okId = "0b6f3c1e-6d1a-4c1f-9a53-2f1c8a0e7d43"
        yield* notified(m.merchantId, "TRX_1", failedId, 500)
        // The failed one is exhausted: every retry answered 500.
        for (let attempt = 2; attempt <= WebhookDelivery.MAX_ATTEMPTS; attempt++) {
          yield* deliveries(
            NotificationId.make(failedId),
            new WebhookDelivery.RecordAttempt({
              attempt,
              result: { _tag: "Answered", statusCode: 500, snippet: "down" },
              latencyMs: 10,
              now: DateTime.unsafeMake(Date.UTC(2026, 10, 23, attempt))
            })
          )
        }
        yield* notified(m.merchantId, "TRX_2", okId, 200)
        const text = page(yield* get("/panel/webhooks?mode=test", browser))
        const rows = [
          ...text.matchAll(
            /data-testid="delivery-row" data-notification-id="([^"]+)" data-delivery="([^"]+)"/g
          )
        ]
        expect(rows.map((r) => [r[1], r[2]])).toEqual([
          [failedId, "failed"],
          [okId, "delivered"]
        ])
        expect(page(yield* get("/panel/webhooks", browser))).toContain('id="deliveries-empty"')
      })
    )
  })

  describe("terminals", () => {
    it.live(
      "bound terminals are enabled and disabled for the API (actor panel:<email>), and R6 is switched on the sandbox device",
      TestApp.given(signedInMerchant(merchantWithTerminal()), function* ({ m, browser }) {
        const shown = page(yield* get("/panel/terminals", browser))
        expect(shown).toContain(
          'data-testid="terminal-row" data-serial="SN-0001" data-api-enabled="true" data-charge-notifications="true"'
        )
        const off = yield* post("/panel/terminals/api", browser, { serial: "SN-0001", enabled: "false" })
        expect(off.headers.location).toBe("/panel/terminals?notice=terminalUpdated")
        expect((yield* streamOf(`Merchant-${m.merchantId}`)).at(-1)).toMatchObject({
          type: "TerminalApiDisabled",
          metadata: { actor: "panel:full_access@cafe.example" }
        })
        expect(
          (yield* Calls.checkout(
            m.terminal.test,
            Bodies.terminalSale(m.serial, { amount: Bodies.saleAmountIva19 })
          )).json
        ).toMatchObject({
          errors: [{ code: "AP004" }]
        })
        const r6 = yield* post("/panel/terminals/charge-notifications", browser, {
          serial: "SN-0001",
          enabled: "false"
        })
        expect(r6.headers.location).toBe("/panel/terminals?notice=terminalUpdated")
        expect((yield* streamOf(`SimTerminal-${m.merchantId}/SN-0001`)).at(-1)).toMatchObject({
          metadata: { actor: "panel:full_access@cafe.example" }
        })
        const state = yield* Calls.behavior(m.terminal.test, m.serial, { mode: "auto_approve" })
        expect(state.json.charge_notifications).toBe(false)
        const after = page(yield* get("/panel/terminals", browser))
        expect(after).toContain(
          'data-serial="SN-0001" data-api-enabled="false" data-charge-notifications="false"'
        )
        const unknown = yield* post("/panel/terminals/api", browser, { serial: "SN-9999", enabled: "true" })
        expect(unknown.headers.location).toBe("/panel/terminals?notice=terminalNotFound")
      })
    )
  })

  describe("who may change what", () => {
    /** A merchant with data for every mutating route, and the form each route takes to succeed. */
    const fixture = Effect.gen(function* () {
      const m = yield* merchantWithTerminal()
      yield* TestApp.setTestWebhook(m.merchantId)
      const s = yield* sale(m.terminal.test, m.serial)
      yield* notified(m.merchantId, s.transactionId, NOTIFICATION, 200)
      const link = yield* Calls.newLink(m.button.test, {
        amount_type: "CLOSE",
        amount: { total_amount: 5000 }
      })
      const requests: Record<string, { readonly path: string; readonly fields: Record<string, string> }> = {
        "/panel/notifications/:notification_id/resend": {
          path: `/panel/notifications/${NOTIFICATION}/resend`,
          fields: {}
        },
        "/panel/links": {
          path: "/panel/links",
          fields: { mode: "test", amount_type: "CLOSE", total_amount: "5000" }
        },
        "/panel/links/:link_id/cancel": { path: `/panel/links/${link.id}/cancel`, fields: {} },
        "/panel/integrations/:integration/:mode/revoke": {
          path: "/panel/integrations/payment_button/test/revoke",
          fields: {}
        },
        "/panel/webhooks": {
          path: "/panel/webhooks",
          fields: { webhook_mode: "production", url: "https://shop.example/h" }
        },
        "/panel/webhooks/test": { path: "/panel/webhooks/test", fields: {} },
        "/panel/webhooks/:webhook_mode/delete": { path: "/panel/webhooks/test/delete", fields: {} },
        "/panel/terminals/api": {
          path: "/panel/terminals/api",
          fields: { serial: m.serial, enabled: "false" }
        },
        "/panel/terminals/charge-notifications": {
          path: "/panel/terminals/charge-notifications",
          fields: { serial: m.serial, enabled: "false" }
        }
      }
      // Every mutating route has its request here: a new route must be added to be tested.
      expect(Object.keys(requests).sort()).toEqual(PanelPage.MUTATING_ROUTES.map((r) => r.path).sort())
      return { merchantId: m.merchantId, requests: Object.values(requests) }
    })

    /** The state the routes change: the log and the simulated terminal (R6 lives in its own stream, counted too). */
    const snapshot = Effect.map(
      allEvents,
      (events) => events.filter((e) => !e.streamId.startsWith("PanelUser-")).length
    )

    it.live(
      "a read_only user sees the pages and is refused (403) on EVERY mutating route, whatever the page showed; nothing changes",
      TestApp.fresh(function* () {
        const { merchantId, requests } = yield* fixture
        const reader = yield* signedIn(merchantId, "read_only")
        const payments = page(yield* get("/panel/payments?mode=test", reader))
        expect(payments).toContain(
          '<span class="badge" id="user-role" data-role="read_only">Solo lectura</span>'
        )
        expect(page(yield* get("/panel/links?mode=test", reader))).not.toContain('id="new-link"')
        const before = yield* snapshot
        for (const request of requests) {
          const reply = yield* post(request.path, reader, request.fields)
          expect(page(reply, 403), request.path).toContain("Tu usuario es de solo lectura")
        }
        expect(yield* snapshot).toBe(before)
        // The same requests succeed for a user with full access: the refusals were the role's.
        const writer = yield* signedIn(merchantId, "full_access")
        for (const request of requests) {
          const reply = yield* post(request.path, writer, request.fields)
          expect([200, 303], `${request.path}: ${reply.status} ${reply.text.slice(0, 200)}`).toContain(
            reply.status
          )
        }
        expect(yield* snapshot).toBeGreaterThan(before)
      })
    )

    it.live(
      "a form without the session's CSRF token, or with another, is refused (403) on every mutating route and sign-out; nothing changes",
      TestApp.fresh(function* () {
        const { merchantId, requests } = yield* fixture
        const writer = yield* signedIn(merchantId)
        const other = yield* signedIn(merchantId, "full_access", "other@cafe.example")
        const before = yield* snapshot
        for (const request of [...requests, { path: "/panel/logout", fields: {} }]) {
          for (const csrf of [null, "", "x".repeat(43), other.csrf]) {
            const reply = yield* post(request.path, writer, request.fields, csrf)
            expect(page(reply, 403), `${request.path} ${csrf}`).toContain('id="message"')
          }
        }
        expect(yield* snapshot).toBe(before)
        expect((yield* get("/panel/payments", writer)).status).toBe(200)
      })
    )
  })

  describe("pages", () => {
    it.live(
      "what merchants and payers typed is escaped: a hostile reference and description show as text",
      TestApp.given(signedInMerchant(merchantWithTerminal()), function* ({ m, browser }) {
        const hostile = `"><script>alert(1)</script><img src=x onerror=alert(2)>`
        const s = yield* sale(m.terminal.test, m.serial, { reference: hostile })
        yield* Calls.newLink(m.button.test, {
          amount_type: "CLOSE",
          amount: { total_amount: 5000 },
          description: `<script>alert("x")</script>`
        })
        const escaped = "&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=alert(2)&gt;"
        const list = page(yield* get("/panel/payments?mode=test", browser))
        expect(list).toContain(escaped)
        expect(list).not.toContain("<script>alert")
        const filtered = page(
          yield* get(`/panel/payments?mode=test&reference=${encodeURIComponent(hostile)}`, browser)
        )
        expect(filtered).toContain(`value="${escaped}"`)
        expect(filtered).not.toContain("<script>alert")
        const detail = page(
          yield* get(
            `/panel/payments/${s.transactionId}?mode=test&kind=terminal&resource=${s.integrationId}`,
            browser
          )
        )
        expect(detail).toContain(`<dd id="payment-reference">${escaped}</dd>`)
        expect(detail).not.toContain("<script>alert")
        const links = page(yield* get("/panel/links?mode=test", browser))
        expect(links).toContain("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;")
        expect(links).not.toContain("<script>alert")
      })
    )

    it.live(
      "every page has the checkout page's security headers and Cache-Control: no-store; the language follows Accept-Language and ?lang=",
      TestApp.given(signedInMerchant(merchantWithTerminal()), function* ({ browser }) {
        for (const path of [
          "/panel/payments",
          "/panel/links",
          "/panel/links/new",
          "/panel/integrations",
          "/panel/webhooks",
          "/panel/terminals",
          "/panel/login"
        ]) {
          const reply = yield* get(path, browser)
          expect(reply.headers["cache-control"], path).toBe("no-store")
          expect(reply.headers["content-security-policy"], path).toBe(
            Html.SECURITY_HEADERS["content-security-policy"]
          )
          expect(reply.headers["content-security-policy"], path).toContain("frame-ancestors 'none'")
          expect(reply.headers["x-frame-options"], path).toBe("DENY")
          expect(reply.headers["x-content-type-options"], path).toBe("nosniff")
          expect(reply.headers["referrer-policy"], path).toBe("same-origin")
        }
        const spanish = page(yield* get("/panel/payments", browser))
        expect(spanish).toContain('<a id="nav-payments" href="/panel/payments" aria-current="page">Pagos</a>')
        expect(spanish).toContain('<a id="nav-terminals" href="/panel/terminals">Datáfonos</a>')
        expect(spanish).toContain('id="sign-out"')
        const english = page(yield* get("/panel/payments", browser, { "accept-language": "en" }))
        expect(english).toContain('<html lang="en">')
        expect(english).toContain('<a id="nav-terminals" href="/panel/terminals">Terminals</a>')
        const chosen = page(yield* get("/panel/payments?lang=en", browser))
        // A chosen language stays on every link and form of the page.
        expect(chosen).toContain('<a id="nav-links" href="/panel/links?lang=en">Links</a>')
        expect(chosen).toContain('<input type="hidden" name="lang" value="en">')
        expect(chosen).toContain('id="lang-switch" href="/panel/payments?lang=es"')
      })
    )
  })
})
