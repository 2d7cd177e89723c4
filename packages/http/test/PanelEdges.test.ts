/**
 * The merchant panel's edges (issue 31, items 5, 9 and 12) through the real handler on a socket:
 * text a header cannot hold never reaches one (checked before the action, encoded where written),
 * unknown panel paths answer the panel's own pages, and every page names the merchant account.
 */
import { describe, expect, it } from "@effect/vitest"
import * as EventStore from "@cobro/domain/EventStore"
import * as Effect from "effect/Effect"
import * as Html from "@cobro/panel/PanelHtml"
import * as Calls from "./support/Calls.js"
import * as Notifications from "./support/Notifications.js"
import * as PanelBrowser from "./support/PanelBrowser.js"
import * as TestApp from "./support/TestApp.js"

const PASSWORD = TestApp.PANEL_PASSWORD
/** U+2028 LINE SEPARATOR: valid UTF-8 in a URL, outside Latin-1, so never a header's value as it is. */
const FORBIDDEN = "/panel/\u2028"

type Browser = PanelBrowser.Browser

const createUser = (merchantId: string, email: string) => TestApp.createPanelUser(merchantId, email)

/** Posts a freshly loaded sign-in form as the user, coming back to `next` when given. */
const signIn = (email: string, next?: string) =>
  PanelBrowser.postLogin({ email, password: PASSWORD, ...(next === undefined ? {} : { next }) })

const { browserOf } = PanelBrowser

const signedIn = (merchantId: string, email = "ana@cafe.example") =>
  Effect.gen(function* () {
    yield* createUser(merchantId, email)
    return yield* PanelBrowser.signIn(email)
  })

const get = (path: string, browser?: Browser) =>
  TestApp.send("GET", path, { headers: browser ? { cookie: browser.cookie } : {} })

const streamOf = (id: string) => Effect.flatMap(EventStore.EventStore, (store) => store.readStream(id))

const NOTIFICATION = "0b6f3c1e-6d1a-4c1f-9a53-2f1c8a0e7d41"

/** A sandbox notification of the merchant, delivered once (200): one that can be re-sent. */
const delivered = (merchantId: string) => Notifications.notified(merchantId, "TRX_1", NOTIFICATION, 200)

/** The panel's page of a refusal: its status, HTML, and the panel's security headers. */
const expectPanelPage = (reply: TestApp.Reply, status: number) => {
  TestApp.expectPage(reply, status)
  for (const [name, value] of Object.entries(Html.SECURITY_HEADERS))
    expect(reply.headers[name], name).toBe(value)
}

describe("the merchant panel's edges (issue 31)", { timeout: 120_000 }, () => {
  describe("text that reaches a header (item 5)", () => {
    it.live(
      "a sign-in whose next a header cannot hold signs in once and goes to the panel with its cookie: a 303, never a 500",
      TestApp.withMerchant(function* (m) {
        const userId = yield* createUser(m.merchantId, "ana@cafe.example")
        const before = (yield* streamOf(`PanelUser-${userId}`)).length
        const reply = yield* signIn("ana@cafe.example", FORBIDDEN)
        expect(reply.status, reply.text).toBe(303)
        expect(reply.headers.location).toBe("/panel/payments")
        expect(reply.headers["set-cookie"]).toMatch(/cobro_panel=[A-Za-z0-9_-]{43};/)
        // One sign-in recorded, and its session works: nothing half done.
        const events = (yield* streamOf(`PanelUser-${userId}`)).slice(before)
        expect(events.map((e) => e.type)).toEqual(["SignedIn"])
        yield* browserOf(reply)
      })
    )

    it.live(
      "a signed-in browser sent to the sign-in page with such a next goes on to the panel (303)",
      TestApp.withMerchant(function* (m) {
        const browser = yield* signedIn(m.merchantId)
        const reply = yield* get(`/panel/login?next=${encodeURIComponent(FORBIDDEN)}`, browser)
        expect(reply.status, reply.text).toBe(303)
        expect(reply.headers.location).toBe("/panel/payments")
        const encoded = yield* get(
          `/panel/login?next=${encodeURIComponent("/panel/payments?reference=café")}`,
          browser
        )
        expect(encoded.status).toBe(303)
        expect(encoded.headers.location).toBe("/panel/payments")
      })
    )

    it.live(
      "a re-send whose return_to a header cannot hold re-sends once and comes back to the notification's page (303)",
      TestApp.withMerchant(function* (m) {
        yield* TestApp.setTestWebhook(m.merchantId)
        const browser = yield* signedIn(m.merchantId)
        yield* delivered(m.merchantId)
        const before = (yield* streamOf(`WebhookDelivery-${NOTIFICATION}`)).length
        const reply = yield* Calls.postForm(
          `/panel/notifications/${NOTIFICATION}/resend`,
          { csrf: browser.csrf, return_to: FORBIDDEN },
          { cookie: browser.cookie }
        )
        expect(reply.status, reply.text).toBe(303)
        expect(reply.headers.location).toBe(`/panel/notifications/${NOTIFICATION}?notice=resent`)
        const events = (yield* streamOf(`WebhookDelivery-${NOTIFICATION}`)).slice(before)
        expect(events.map((e) => e.type)).toEqual(["ResendRequested"])
      })
    )
  })

  describe("unknown panel paths (item 9)", () => {
    it.live(
      "an unknown path under /panel is the panel's 404 page with its security headers; a method a panel page does not take, its 405; a path or query no id holds, its 400; the API's stay JSON",
      TestApp.fresh(function* () {
        for (const path of ["/panel/nope", "/panel/payments/TRX_1/more", "/panel/%E2%80%A8"]) {
          const reply = yield* get(path)
          expectPanelPage(reply, 404)
          expect(reply.text, path).toContain('id="message"')
          expect(reply.text, path).toContain("No encontrado")
        }
        const posted = yield* Calls.postForm("/panel/nope", {})
        expectPanelPage(posted, 404)
        const english = yield* TestApp.send("GET", "/panel/nope?lang=en")
        expect(english.text).toContain("Not found")
        const wrongMethod = yield* TestApp.send("DELETE", "/panel/payments")
        expectPanelPage(wrongMethod, 405)
        expect(wrongMethod.headers.allow).toBe("GET")
        // Text no path or query holds (SV-24) is the panel's page of a bad request there too.
        const control = yield* get("/panel/payments?reference=%00")
        expectPanelPage(control, 400)
        expect(control.text).toContain("Solicitud no válida")
        TestApp.expectError(yield* TestApp.send("GET", "/v1/nope"), 404, "NotFound")
        TestApp.expectError(yield* TestApp.send("GET", "/v1/payment/%00"), 400, "ValidationError")
      })
    )
  })

  describe("the merchant account (item 12)", () => {
    it.live(
      "after signing in, every panel page shows the name of the merchant account the user is in, escaped",
      TestApp.fresh(function* () {
        const m = yield* TestApp.createMerchant(`Café <b>"Central"</b> & Co`)
        const browser = yield* signedIn(m.merchantId)
        const shown = `<strong>Café &lt;b&gt;&quot;Central&quot;&lt;/b&gt; &amp; Co</strong>`
        for (const path of [
          "/panel/payments",
          "/panel/payments?mode=test",
          "/panel/links",
          "/panel/links/new",
          "/panel/integrations",
          "/panel/webhooks",
          "/panel/terminals",
          `/panel/notifications/${NOTIFICATION}`,
          "/panel/payments/TRX_404?kind=terminal&resource=INT_404"
        ]) {
          const reply = yield* get(path, browser)
          expect(reply.headers["content-type"], path).toMatch(/^text\/html/)
          expect(reply.text, path).toContain(
            `<span id="merchant-name"><span class="sr-only">Cuenta: </span>${shown}</span>`
          )
        }
        const other = yield* TestApp.createMerchant("Otra tienda")
        const stranger = yield* signedIn(other.merchantId, "bob@otra.example")
        const theirs = yield* get("/panel/payments?lang=en", stranger)
        expect(theirs.text).toContain(
          `<span id="merchant-name"><span class="sr-only">Account: </span><strong>Otra tienda</strong></span>`
        )
        expect(theirs.text).not.toContain("Central")
      })
    )
  })
})
