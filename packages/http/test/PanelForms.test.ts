/**
 * The merchant panel's forms act once (issue 31, item 1; `FormKey`) through the real handler on a
 * socket: every rendered form with an effect carries a one-time `form_key`, and the same form sent
 * again (a double click, a reload, back-and-resubmit) does what it does once and gets the same answer.
 */
import { describe, expect, it } from "@effect/vitest"
import * as AppendFence from "@cobro/domain/AppendFence"
import * as EventStore from "@cobro/domain/EventStore"
import * as IdempotencyStore from "@cobro/domain/IdempotencyStore"
import * as LinkApi from "@cobro/domain/LinkApi"
import * as LinkPayments from "@cobro/domain/LinkPayments"
import * as MerchantDirectory from "@cobro/domain/MerchantDirectory"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as Idempotency from "../src/Idempotency.js"
import * as FormKey from "@cobro/panel/FormKey"
import * as Calls from "./support/Calls.js"
import * as Notifications from "./support/Notifications.js"
import * as PanelBrowser from "./support/PanelBrowser.js"
import * as TestApp from "./support/TestApp.js"
import * as TestClock from "./support/TestClock.js"

interface Browser {
  readonly userId: string
  readonly cookie: string
}

/** Creates a full-access panel user of the merchant and signs it in through the sign-in form. */
const signedIn = (merchantId: string, email: string) =>
  Effect.gen(function* () {
    const userId = yield* TestApp.createPanelUser(merchantId, email)
    const reply = yield* PanelBrowser.postSignIn(email)
    expect(reply.status, reply.text).toBe(303)
    return { userId, cookie: PanelBrowser.sessionCookieOf(reply) } satisfies Browser
  })

const unescape = (text: string) =>
  text
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&amp;/g, "&")

/** The hidden fields of the page's form that posts to `action`, as the browser would send them. */
const renderedForm = (browser: Browser, page: string, action: string) =>
  Effect.gen(function* () {
    const reply = yield* TestApp.send("GET", page, { headers: { cookie: browser.cookie } })
    TestApp.expectPage(reply, 200)
    const form = new RegExp(
      `<form method="post" action="${action.replace(/[?]/g, "\\?")}"[^>]*>([\\s\\S]*?)</form>`
    ).exec(reply.text)
    expect(form, `a form posting to ${action} on ${page}`).not.toBeNull()
    const fields: Record<string, string> = {}
    for (const [, name, value] of form![1]!.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g))
      fields[name!] = unescape(value!)
    return fields
  })

const post = (browser: Browser, action: string, fields: Record<string, string>) =>
  Calls.postForm(action, fields, { cookie: browser.cookie })

/**
 * A form's request that reserved its key, committed `effect` under the key's fence, and whose process
 * then died (nothing completes, releases or renews its key): what `kill -9` leaves after the commit.
 */
const diedAfterCommit = <A, E, R>(
  merchantId: string,
  browser: Browser,
  path: string,
  form: Record<string, string>,
  effect: Effect.Effect<A, E, R>
) =>
  Effect.gen(function* () {
    const store = yield* IdempotencyStore.IdempotencyStore
    const scope = FormKey.scopeOf({ merchantId, userId: browser.userId }, form.form_key!)
    const print = yield* Idempotency.fingerprint(
      "POST",
      path,
      FormKey.fingerprintedForm(new URLSearchParams(form))
    )
    expect(yield* store.reserve(scope, print, yield* DateTime.now, "dead-owner")).toEqual(
      IdempotencyStore.Reservation.Reserved()
    )
    return yield* Effect.provideService(effect, AppendFence.AppendFence, store.fence(scope, "dead-owner"))
  })

/** The events of the log of a type. */
const eventsOfType = (type: string) =>
  Effect.flatMap(EventStore.EventStore, (store) =>
    Effect.map(store.readAll({ limit: 1_000_000 }), (events) => events.filter((e) => e.type === type))
  )

const streamOf = (id: string) => Effect.flatMap(EventStore.EventStore, (store) => store.readStream(id))

const NOTIFICATION = "0b6f3c1e-6d1a-4c1f-9a53-2f1c8a0e7d41"

/** A sandbox notification of the merchant, delivered once (200): one that can be re-sent. */
const delivered = (merchantId: string) => Notifications.notified(merchantId, "TRX_1", NOTIFICATION, 200)

/** What a merchant types into the link form. */
const LINK = {
  amount_type: "CLOSE",
  total_amount: "50.000",
  currency: "COP",
  description: "Dos cafés",
  reference: "pedido-7",
  expiration_date: "2036-11-30T18:00",
  payment_methods: "CREDIT_CARD"
}

/** The link form as a fresh render gives it, filled in. */
const linkForm = (browser: Browser) =>
  Effect.map(
    renderedForm(browser, "/panel/links/new?mode=test", "/panel/links"),
    (hidden): Record<string, string> => ({ ...hidden, ...LINK })
  )

/** Given a merchant with a terminal and Ana signed in: the link-create form her browser renders. */
const givenLinkForm = Effect.gen(function* () {
  const m = yield* TestApp.createMerchantWithTerminal()
  const browser = yield* signedIn(m.merchantId, "ana@cafe.example")
  return { m, browser, form: yield* linkForm(browser) }
})

const expectLinkCreated = (reply: TestApp.Reply) => {
  expect(reply.status, reply.text).toBe(303)
  expect(reply.headers.location).toMatch(
    /^\/panel\/links\?mode=test&created=LNK_[A-Za-z0-9]+&notice=linkCreated$/
  )
}

/** `second` created a link other than `first`'s: the log holds the two. */
const expectSecondLink = (second: TestApp.Reply, first: TestApp.Reply) =>
  Effect.gen(function* () {
    expectLinkCreated(second)
    expect(second.headers.location).not.toBe(first.headers.location)
    expect(yield* eventsOfType("LinkCreated")).toHaveLength(2)
  })

/** The form sent again is answered with the first request's 303, to the same place. */
const expectSameRedirect = (again: TestApp.Reply, first: TestApp.Reply) => {
  expect(again.status, again.text).toBe(303)
  expect(again.headers.location).toBe(first.headers.location)
}

describe("the panel's forms act once (issue 31, item 1)", { timeout: 120_000 }, () => {
  it.live(
    "a re-send form submitted twice re-sends the notification once, and both answers are the same 303",
    TestApp.withMerchant(function* (m) {
      yield* TestApp.setTestWebhook(m.merchantId)
      const browser = yield* signedIn(m.merchantId, "ana@cafe.example")
      yield* delivered(m.merchantId)
      const action = `/panel/notifications/${NOTIFICATION}/resend`
      const form = yield* renderedForm(browser, `/panel/notifications/${NOTIFICATION}`, action)
      expect(form.form_key).toMatch(/^[0-9a-f-]{36}$/)
      // A refused request (a forged token) takes no key: the form itself still acts.
      const forged = yield* post(browser, action, { ...form, csrf: "forged" })
      expect(forged.status).toBe(403)
      const first = yield* post(browser, action, form)
      const again = yield* post(browser, action, form)
      for (const reply of [first, again]) {
        expect(reply.status, reply.text).toBe(303)
        expect(reply.headers.location).toBe(`/panel/notifications/${NOTIFICATION}?notice=resent`)
      }
      const events = yield* streamOf(`WebhookDelivery-${NOTIFICATION}`)
      expect(events.filter((e) => e.type === "ResendRequested")).toHaveLength(1)
    })
  )

  it.live(
    "two concurrent submissions of one link-create form create one link, and both get its 303",
    TestApp.fresh(function* () {
      const { browser, form } = yield* givenLinkForm
      const [a, b] = yield* Effect.all(
        [post(browser, "/panel/links", form), post(browser, "/panel/links", form)],
        {
          concurrency: 2
        }
      )
      expectLinkCreated(a!)
      expectSameRedirect(b!, a!)
      expect(yield* eventsOfType("LinkCreated")).toHaveLength(1)
    })
  )

  it.live(
    "a second render of the form gets another key: two links made on purpose are two links",
    TestApp.fresh(function* () {
      const { browser, form: first } = yield* givenLinkForm
      const second = yield* linkForm(browser)
      expect(first.form_key).toMatch(/^[0-9a-f-]{36}$/)
      expect(second.form_key).toMatch(/^[0-9a-f-]{36}$/)
      expect(second.form_key).not.toBe(first.form_key)
      const a = yield* post(browser, "/panel/links", first)
      const b = yield* post(browser, "/panel/links", second)
      expectLinkCreated(a)
      yield* expectSecondLink(b, a)
    })
  )

  it.live(
    "a form key is its user's: another user of the merchant sending the same key acts on its own",
    TestApp.fresh(function* () {
      const { m, browser: ana, form } = yield* givenLinkForm
      const beto = yield* signedIn(m.merchantId, "beto@cafe.example")
      const first = yield* post(ana, "/panel/links", form)
      const again = yield* post(ana, "/panel/links", form)
      expectLinkCreated(first)
      expectSameRedirect(again, first)
      // Beto's own page, Ana's key: a key of another user is a new key.
      const betos = yield* linkForm(beto)
      const other = yield* post(beto, "/panel/links", { ...betos, form_key: form.form_key! })
      yield* expectSecondLink(other, first)
    })
  )

  it.live(
    "a revoke form sent again revokes once; the new keys are shown to the first answer only and never kept",
    TestApp.withMerchant(function* (m) {
      const browser = yield* signedIn(m.merchantId, "ana@cafe.example")
      const action = "/panel/integrations/payment_button/test/revoke"
      const form = yield* renderedForm(browser, `${action}?mode=test`, action)
      const first = yield* post(browser, action, form)
      TestApp.expectPage(first, 200)
      const secret = /id="new-secret-key" value="([^"]+)"/.exec(first.text)![1]!
      const again = yield* post(browser, action, form)
      expect(again.status, again.text).toBe(303)
      expect(again.headers.location).toBe("/panel/integrations?mode=test&notice=keysShownOnce")
      expect(again.text).not.toContain(secret)
      const rotated = (yield* streamOf(`Merchant-${m.merchantId}`)).filter((e) => e.type === "KeyRotated")
      expect(rotated).toHaveLength(1)
    })
  )

  it.live(
    "a link-create form sent again after its first request died past the link's commit answers the 303 naming that link, and creates no second link",
    TestApp.fresh(function* () {
      const { m, browser, form } = yield* givenLinkForm
      const credential = MerchantDirectory.Credential.make({
        merchantId: m.merchantId as never,
        integration: "payment_button",
        mode: "test",
        identityKeyHash: "0".repeat(64) as never
      })
      const request = yield* Schema.decodeUnknown(LinkApi.CreateLinkRequest)({
        amount_type: "CLOSE",
        amount: { total_amount: 50_000 }
      })
      const created = yield* diedAfterCommit(
        m.merchantId,
        browser,
        "/panel/links",
        form,
        LinkPayments.create(credential, request)
      )
      yield* Effect.flatMap(TestClock.VirtualTime, (time) => time.advance(IdempotencyStore.LEASE_MS))
      const recovered = yield* post(browser, "/panel/links", form)
      expect(recovered.status, recovered.text).toBe(303)
      expect(recovered.headers.location).toBe(
        `/panel/links?mode=test&created=${created.linkId}&notice=linkCreated`
      )
      const again = yield* post(browser, "/panel/links", form)
      expectSameRedirect(again, recovered)
      expect(yield* eventsOfType("LinkCreated")).toHaveLength(1)
    })
  )

  it.live(
    "a refused link form sent again shows the same page of errors, with the session's token, which its key does not keep",
    TestApp.fresh(function* () {
      const { m, browser, form: rendered } = yield* givenLinkForm
      const form: Record<string, string> = { ...rendered, total_amount: "1" }
      const first = yield* post(browser, "/panel/links", form)
      TestApp.expectPage(first, 400)
      expect(first.text).toContain('data-testid="field-error"')
      const again = yield* post(browser, "/panel/links", form)
      expect(again.status).toBe(400)
      expect(again.headers["idempotent-replayed"]).toBe("true")
      expect(again.text).toBe(first.text)
      expect(again.text).toContain(`name="csrf" value="${form.csrf}"`)
      // What the key keeps of the answer: the page without the session's token.
      const store = yield* IdempotencyStore.IdempotencyStore
      const print = yield* Idempotency.fingerprint(
        "POST",
        "/panel/links",
        FormKey.fingerprintedForm(new URLSearchParams(form))
      )
      const kept = yield* store.reserve(
        FormKey.scopeOf({ merchantId: m.merchantId, userId: browser.userId }, form.form_key!),
        print,
        yield* DateTime.now,
        "probe"
      )
      expect(kept._tag).toBe("Replay")
      const body = (kept as { readonly response: IdempotencyStore.StoredResponse }).response.body
      expect(body).toContain("field-error")
      expect(body).not.toContain(form.csrf!)
      expect(yield* eventsOfType("LinkCreated")).toHaveLength(0)
    })
  )

  it.live(
    "one rendered form sent again with other values is refused with the panel's 409 page and does nothing",
    TestApp.fresh(function* () {
      const { browser, form } = yield* givenLinkForm
      expectLinkCreated(yield* post(browser, "/panel/links", form))
      const changed = yield* post(browser, "/panel/links", { ...form, reference: "pedido-8" })
      TestApp.expectPage(changed, 409)
      expect(changed.text).toContain("Formulario ya enviado")
      expect(yield* eventsOfType("LinkCreated")).toHaveLength(1)
    })
  )
})
