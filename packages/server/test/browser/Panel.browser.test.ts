/**
 * The merchant panel in a real browser (issue 22, "Tests"): Debian's Chromium driven by playwright-core
 * against one real server process (`npm start`'s script, PGlite, development webhooks) and a local
 * webhook receiver. Each test has a merchant of its own, made through the admin API, with a
 * `full_access` and a `read_only` panel user; payments are made through the public API or paid on the
 * checkout page, and every change made in the panel is checked from outside it (the API's answers,
 * the receiver, the admin API's history).
 * Slow by design: Chromium drives every page through a real server, one merchant per test.
 */
import * as PanelPage from "@cobro/panel/PanelPage"
import * as PanelText from "@cobro/panel/PanelText"
import { describe, expect, it } from "@effect/vitest"
import type { BrowserContext, Page } from "playwright-core"
import * as ServerProcess from "../support/ServerProcess.js"
import * as Suite from "./support/Suite.js"

const ADMIN_TOKEN = "panel-browser-admin-token"
const PASSWORD = "una clave de panel muy larga"
const SHOP = "https://shop.example"
const es = PanelText.messages.es

const suite = Suite.make("cobro-panel-browser-", { ADMIN_TOKEN })
const call = suite.call
const admin = (method: string, path: string, body?: unknown) =>
  call(method, path, { auth: `Bearer ${ADMIN_TOKEN}`, body })
const withKey = (key: string, method: string, path: string, body?: unknown) =>
  call(method, path, { auth: `x-api-key ${key}`, body })

/** A merchant of one test: its id, its keys as created, and its two panel users' emails. */
interface Shop {
  readonly merchantId: string
  readonly keys: any
  /** The payment-button test key (links, online payments in the sandbox). */
  readonly buttonKey: string
  readonly fullAccess: string
  readonly readOnly: string
}

let shops = 0

/** A merchant with card, PSE and wallet link methods and a `full_access` and a `read_only` user. */
const newShop = async (name: string): Promise<Shop> => {
  const created = await admin("POST", "/admin/v1/merchants", { name })
  expect(created.status, created.text).toBe(201)
  const merchantId: string = created.json.merchant_id
  const bounds = { min: 1000, max: 5_000_000 }
  const methods = await admin("PUT", `/admin/v1/merchants/${merchantId}/payment-methods`, {
    link: { CREDIT_CARD: bounds, PSE: bounds, WALLET_A: bounds },
    terminal: { POS: true }
  })
  expect(methods.status, methods.text).toBe(200)
  const n = ++shops
  const users = { fullAccess: `owner${n}@panel.test`, readOnly: `viewer${n}@panel.test` }
  for (const [email, role] of [
    [users.fullAccess, "full_access"],
    [users.readOnly, "read_only"]
  ] as const) {
    const user = await admin("POST", `/admin/v1/merchants/${merchantId}/users`, {
      email,
      password: PASSWORD,
      role
    })
    expect(user.status, user.text).toBe(201)
  }
  const buttonKey: string = created.json.keys.payment_button.test.identity_key
  // One warm-up read: the log-backed directory answers the first lookup of a new key late.
  await withKey(buttonKey, "GET", "/online/link/v1/payment_methods")
  return { merchantId, keys: created.json.keys, buttonKey, ...users }
}

/** C1 then C4 with the sandbox's approving card: an online payment of `amount` COP; its transaction id. */
const onlinePayment = async (shop: Shop, reference: string, amount: number) => {
  const intent = await withKey(shop.buttonKey, "POST", "/v1/payment-intent", {
    reference_id: reference,
    amount: { currency: "COP", total_amount: amount },
    description: "Café de origen",
    callback_url: `${SHOP}/back`
  })
  expect(intent.status, intent.text).toBe(201)
  const attempt = await withKey(shop.buttonKey, "POST", "/v1/payment", {
    reference_id: reference,
    payment_method: { name: "CREDIT_CARD", card_number: "4111111111111111" }
  })
  expect(attempt.status, attempt.text).toBe(201)
  return attempt.json.transaction_id as string
}

/** The merchant's webhook of `mode` set through the admin API. */
const adminWebhook = async (shop: Shop, mode: "test" | "production", url = suite.hooks.url) => {
  const set = await admin("PUT", `/admin/v1/merchants/${shop.merchantId}/webhook`, { url, mode })
  expect(set.status, set.text).toBe(200)
}

/** The notifications the receiver got for the merchant. */
const receivedBy = (shop: Shop) =>
  suite.hooks.received.filter((r) => r.json?.data?.merchant_id === shop.merchantId)

/** A stream's history as the admin API answers it. */
const history = async (streamId: string) => {
  const reply = await admin("GET", `/admin/v1/streams/${streamId}/history`)
  expect(reply.status, reply.text).toBe(200)
  return reply.json.events as ReadonlyArray<any>
}

/** Runs `run` in a fresh browser context (Spanish, Colombia), closed after. */
const withContext = async <A>(
  run: (context: BrowserContext) => Promise<A>,
  options: { width?: number } = {}
): Promise<A> => {
  const context = await suite.browser.newContext({
    locale: "es-CO",
    viewport: { width: options.width ?? 1280, height: 900 }
  })
  await context.route(`${SHOP}/**`, (route) =>
    route.fulfill({ status: 200, contentType: "text/html", body: "<h1 id=shop>Back at the shop</h1>" })
  )
  try {
    return await run(context)
  } finally {
    await context.close()
  }
}

/** Signs in on the login form and waits for the payments list. */
const signIn = async (page: Page, email: string) => {
  await page.goto(`${suite.server.url}/panel/login`)
  await page.locator("#email").fill(email)
  await page.locator("#password").fill(PASSWORD)
  await page.locator("#sign-in").click()
  await page.waitForURL(/\/panel\/payments/)
}

/** A page of a context signed in as `email`. */
const signedIn = async (context: BrowserContext, email: string) => {
  const page = await context.newPage()
  await signIn(page, email)
  return page
}

/** Reloads `page` until `selector` is there (what the server does after an answer takes a moment). */
const reloadUntil = async (page: Page, selector: string, timeoutMs = 30_000) => {
  const deadline = Date.now() + timeoutMs
  while ((await page.locator(selector).count()) === 0) {
    if (Date.now() > deadline) throw new Error(`${selector} did not appear on ${page.url()}`)
    await new Promise((r) => setTimeout(r, 300))
    await page.reload()
  }
}

const fillCard = async (page: Page) => {
  await page.getByLabel(/Tarjeta de crédito|Credit or debit card/).check()
  await page.locator("#card_number").fill("4111111111111111")
  await page.locator("#card_name").fill("Ana Gómez")
  await page.locator("#card_expiry").fill("1230")
  await page.locator("#card_cvc").fill("123")
}

/** The widest the page's document is, against the viewport's width. */
const widths = (page: Page) =>
  page.evaluate(() => {
    const g = globalThis as any
    return {
      scrollWidth: g.document.documentElement.scrollWidth as number,
      innerWidth: g.innerWidth as number
    }
  })

describe("the merchant panel in Chromium", () => {
  it("a full-access user signs in, finds an API payment by its reference in test mode, and opens its detail and history", async () => {
    const shop = await newShop("Tostadora Andina")
    const transactionId = await onlinePayment(shop, "panel-find-me", 50_000)
    await onlinePayment(shop, "panel-other", 20_000)
    await withContext(async (context) => {
      const page = await context.newPage()
      // A wrong password is refused with a message that says only that, and no session.
      await page.goto(`${suite.server.url}/panel/payments`)
      await page.waitForURL(/\/panel\/login/)
      await page.locator("#email").fill(shop.fullAccess)
      await page.locator("#password").fill("not the password at all")
      await page.locator("#sign-in").click()
      await page.locator("#sign-in-error").waitFor()
      expect(page.url()).toContain("/panel/login")
      await page.locator("#password").fill(PASSWORD)
      await page.locator("#sign-in").click()
      await page.waitForURL(/\/panel\/payments/)
      await expect(page.locator("#user-email").innerText()).resolves.toBe(shop.fullAccess)

      // Production first: the sandbox payments are not there.
      expect(await page.locator("[data-testid=payment-row]").count()).toBe(0)
      await page.locator("#mode-test").click()
      await page.locator("#test-mode-banner").waitFor()
      expect(await page.locator("[data-testid=payment-row]").count()).toBe(2)
      await page.locator("#payment-filters #reference").fill("panel-find-me")
      await page.locator("#apply-filters").click()
      await page.waitForURL(/reference=panel-find-me/)
      await reloadUntil(page, "[data-testid=payment-row][data-status=APPROVED]")
      const rows = page.locator("[data-testid=payment-row]")
      expect(await rows.count()).toBe(1)
      await expect(rows.first().getAttribute("data-transaction-id")).resolves.toBe(transactionId)
      await expect(rows.first().getAttribute("data-kind")).resolves.toBe("online")

      await rows.first().locator("[data-testid=payment-link]").click()
      await page.locator("#transaction-id").waitFor()
      await expect(page.locator("#transaction-id").innerText()).resolves.toBe(transactionId)
      await expect(page.locator("#payment-status").getAttribute("data-status")).resolves.toBe("APPROVED")
      await expect(page.locator("#payment-reference").innerText()).resolves.toBe("panel-find-me")
      await expect(page.locator("#payment-amount").innerText()).resolves.toContain("50.000")
      await expect(page.locator("#card-summary").innerText()).resolves.toContain("1111")
      // The history: the stream's events in order, each with the state after it.
      const events = page.locator("#history [data-testid=history-event]")
      const types = await events.evaluateAll((rows) => rows.map((r: any) => r.getAttribute("data-type")))
      expect(types).toEqual(["PaymentStarted", "PaymentApproved"])
      await expect(events.last().locator("details summary").innerText()).resolves.toBe("APPROVED")
      // What the admin API's history says of the same stream (the actors included).
      const logged = await history(`Payment-${transactionId}`)
      const actors = await events.evaluateAll((rows) => rows.map((r: any) => r.getAttribute("data-actor")))
      expect(actors).toEqual(logged.map((e) => e.actor ?? ""))
    })
  })

  it("re-sending a delivered notification from the payment's page reaches the local receiver again and adds an attempt", async () => {
    const shop = await newShop("Panadería La Espiga")
    await withContext(async (context) => {
      const page = await signedIn(context, shop.fullAccess)
      // The receiver registered as the test webhook through the panel's form.
      await page.locator("#nav-webhooks").click()
      await page.locator("#webhook-url-test").fill(suite.hooks.url)
      await page.locator("#save-webhook-test").click()
      await page.locator("#webhook-test-url").waitFor()

      const transactionId = await onlinePayment(shop, "panel-resend", 30_000)
      const first = await suite.hooks.waitFor(
        (r) => r.json?.data?.payment_id === transactionId && r.json?.type === "SALE_APPROVED"
      )
      await page.goto(`${suite.server.url}/panel/payments?mode=test&reference=panel-resend`)
      await page.locator("[data-testid=payment-link]").click()
      await reloadUntil(page, "[data-testid=delivery][data-status=DELIVERED]")
      const delivery = page.locator("[data-testid=delivery]")
      const notificationId = (await delivery.getAttribute("data-notification-id"))!
      expect(await delivery.locator("[data-testid=attempt]").count()).toBe(1)
      await expect(delivery.locator("[data-testid=delivery-url]").innerText()).resolves.toBe(suite.hooks.url)

      await page.locator(`#resend-${notificationId}`).click()
      await expect(page.locator("#flash").innerText()).resolves.toBe(es.flash.resent)
      const again = await suite.hooks.waitFor(
        (r) => r.json?.data?.payment_id === transactionId && r !== first && r.json?.type === "SALE_APPROVED"
      )
      expect(again.json.data).toEqual(first.json.data)
      expect(receivedBy(shop).filter((r) => r.json?.data?.payment_id === transactionId)).toHaveLength(2)
      await reloadUntil(page, "[data-testid=delivery] [data-testid=attempt][data-attempt='2']")
      expect(await page.locator("[data-testid=delivery] [data-testid=attempt]").count()).toBe(2)
      // The re-send is recorded with the panel user as its actor.
      const steps = await history(`WebhookDelivery-${notificationId}`)
      expect(steps.map((e) => e.actor)).toContain(`panel:${shop.fullAccess}`)
    })
  })

  it("a link created from the panel's form (after a field error) is paid on the checkout page and listed as PAID", async () => {
    const shop = await newShop("Café Quindío")
    await withContext(async (context) => {
      const page = await signedIn(context, shop.fullAccess)
      await page.locator("#mode-test").click()
      await page.locator("#nav-links").click()
      await page.locator("#new-link").click()
      await page.locator("#link-form").waitFor()
      await page.locator("#total_amount").fill("cincuenta")
      await page.locator("#description").fill("Café de origen, 500 g")
      await page.locator("#reference").fill("panel-link-1")
      await page.locator("#create-link").click()
      await page.locator("#total_amount-error").waitFor()
      await expect(page.locator("#total_amount").getAttribute("aria-invalid")).resolves.toBe("true")
      // What was typed stays in the form beside the error.
      await expect(page.locator("#reference").inputValue()).resolves.toBe("panel-link-1")
      expect((await admin("GET", `/admin/v1/merchants/${shop.merchantId}/links`)).json.data).toEqual([])

      await page.locator("#total_amount").fill("45.000")
      await page.locator("#create-link").click()
      await page.locator("#created-link-url").waitFor()
      const url = await page.locator("#created-link-url").inputValue()
      const linkId = (await page.locator("#created-link").getAttribute("data-link-id"))!
      await expect(
        page.locator(`[data-testid=link-row][data-link-id=${linkId}]`).getAttribute("data-status")
      ).resolves.toBe("ACTIVE")

      const payer = await context.browser()!.newContext({ locale: "es-CO" })
      try {
        const checkout = await payer.newPage()
        await checkout.goto(url)
        await expect(checkout.locator("#amount-total").innerText()).resolves.toContain("$ 45.000")
        await fillCard(checkout)
        await checkout.locator("#pay").click()
        await checkout.locator("#result[data-status=PAID]").waitFor()
      } finally {
        await payer.close()
      }

      await page.locator("#nav-payments").click()
      await page.locator("#payment-filters #reference").fill("panel-link-1")
      await page.locator("#apply-filters").click()
      await reloadUntil(page, "[data-testid=payment-row][data-kind=link][data-status=PAID]")
      await page.locator("[data-testid=payment-link]").click()
      await page.locator("#transaction-id").waitFor()
      // The link's history: created by the panel user, then paid.
      const created = page.locator("[data-testid=history-event][data-type=LinkCreated]")
      await expect(created.getAttribute("data-actor")).resolves.toBe(`panel:${shop.fullAccess}`)
      expect(await page.locator("[data-testid=history-event][data-type=LinkPaid]").count()).toBe(1)
      await page.locator("#nav-links").click()
      await expect(
        page.locator(`[data-testid=link-row][data-link-id=${linkId}]`).getAttribute("data-status")
      ).resolves.toBe("PAID")
    })
  })

  it("revoking a key after the confirmation shows the new pair once: the old key is refused (401), the new one accepted", async () => {
    const shop = await newShop("Librería El Faro")
    const old = shop.buttonKey
    expect((await withKey(old, "GET", "/online/link/v1/payment_methods")).status).toBe(200)
    await withContext(async (context) => {
      const page = await signedIn(context, shop.fullAccess)
      await page.locator("#nav-integrations").click()
      await page.locator("#revoke-payment_button-test").click()
      await page.locator("#confirm-button").waitFor()
      // Nothing happened yet: the confirmation asks first.
      expect((await withKey(old, "GET", "/online/link/v1/payment_methods")).status).toBe(200)
      await page.locator("#confirm-button").click()
      await page.locator("#new-identity-key").waitFor()
      const identity = await page.locator("#new-identity-key").inputValue()
      const secret = await page.locator("#new-secret-key").inputValue()
      expect(identity).toMatch(/^id_test_btn_/)
      expect(secret).toMatch(/^sk_test_btn_/)
      expect(identity).not.toBe(old)

      const refused = await withKey(old, "GET", "/online/link/v1/payment_methods")
      expect(refused.status, refused.text).toBe(401)
      const accepted = await withKey(identity, "GET", "/online/link/v1/payment_methods")
      expect(accepted.status, accepted.text).toBe(200)
      // The other integration and mode keep their keys.
      const production = shop.keys.payment_button.production.identity_key
      expect((await withKey(production, "GET", "/online/link/v1/payment_methods")).status).toBe(200)
      // Shown once: the integrations page shows no key, only its fingerprint.
      await page.locator("#keys-done").click()
      expect(await page.content()).not.toContain(identity)
    })
  })

  it("a webhook registered through the panel (after a refused URL) gets the test notification; deleted, it gets none", async () => {
    const shop = await newShop("Floristería Girasol")
    await withContext(async (context) => {
      const page = await signedIn(context, shop.fullAccess)
      await page.locator("#nav-webhooks").click()
      await page.locator("#webhook-url-test").fill("ftp://shop.example/hook")
      await page.locator("#save-webhook-test").click()
      await page.locator("#webhook-url-test-error").waitFor()
      await page.locator("#webhook-test-none").waitFor()

      await page.locator("#webhook-url-test").fill(suite.hooks.url)
      await page.locator("#standard-webhooks-test").check()
      await page.locator("#save-webhook-test").click()
      await page.locator("#webhook-test-url").waitFor()
      await expect(page.locator("#webhook-test-url").innerText()).resolves.toBe(suite.hooks.url)
      await page.locator("#webhook-test-standard").waitFor()

      await page.locator("#send-test-notification").click()
      const test = await suite.hooks.waitFor(
        (r) =>
          r.json?.data?.merchant_id === shop.merchantId &&
          r.json?.data?.metadata?.reference === "cobro-test-notification"
      )
      expect(test.json.type).toBe("SALE_APPROVED")
      // The notification's page: the delivery and its attempt.
      await reloadUntil(page, "[data-testid=delivery][data-status=DELIVERED] [data-testid=attempt]")
      await page.locator("#nav-webhooks").click()
      await page.locator("#mode-test").click()
      expect(await page.locator("[data-testid=delivery-row]").count()).toBe(1)

      await page.locator("#delete-webhook-test").click()
      await page.locator("#confirm-button").click()
      await page.locator("#webhook-test-none").waitFor()
      const before = receivedBy(shop).length
      await page.locator("#send-test-notification").click()
      await expect(page.locator("#flash").innerText()).resolves.toBe(es.flash.noTestWebhook)
      await new Promise((r) => setTimeout(r, 1500))
      expect(receivedBy(shop)).toHaveLength(before)
      const steps = await history(`Merchant-${shop.merchantId}`)
      expect(steps.filter((e) => e.actor === `panel:${shop.fullAccess}`).length).toBeGreaterThanOrEqual(2)
    })
  })

  it("a bound terminal enabled for the API on the terminals page takes a sale it refused before", async () => {
    const shop = await newShop("Droguería San Jorge")
    const bound = await admin("POST", `/admin/v1/merchants/${shop.merchantId}/terminals`, {
      terminal_model: "SMART_PRO",
      terminal_serial: "SN-PANEL-1",
      name: "Caja 1"
    })
    expect(bound.status, bound.text).toBe(201)
    const terminalKey = shop.keys.terminal_api.test.identity_key
    const sale = ServerProcess.terminalSale("SN-PANEL-1", "panel-terminal-1")
    const refused = await withKey(terminalKey, "POST", "/payments/app-checkout", sale)
    expect(refused.status, refused.text).not.toBe(201)
    await withContext(async (context) => {
      const page = await signedIn(context, shop.fullAccess)
      await page.locator("#nav-terminals").click()
      const row = page.locator("[data-testid=terminal-row][data-serial=SN-PANEL-1]")
      await expect(row.getAttribute("data-api-enabled")).resolves.toBe("false")
      await page.locator("#toggle-api-0").click()
      await page.locator("#flash").waitFor()
      await expect(row.getAttribute("data-api-enabled")).resolves.toBe("true")
    })
    const accepted = await withKey(terminalKey, "POST", "/payments/app-checkout", sale)
    expect(accepted.status, accepted.text).toBe(201)
    const steps = await history(`Merchant-${shop.merchantId}`)
    expect(steps.find((e) => e.type === "TerminalApiEnabled")?.actor).toBe(`panel:${shop.fullAccess}`)
  })

  it("a read-only user sees every page but no form to change anything, and every mutating route refuses it with 403", async () => {
    const shop = await newShop("Ferretería El Tornillo")
    await adminWebhook(shop, "test")
    const bound = await admin("POST", `/admin/v1/merchants/${shop.merchantId}/terminals`, {
      terminal_model: "SMART_PRO",
      terminal_serial: "SN-READ-1",
      name: "Caja"
    })
    expect(bound.status, bound.text).toBe(201)
    const link = await withKey(shop.buttonKey, "POST", "/online/link/v1", {
      amount_type: "CLOSE",
      amount: { total_amount: 40_000 },
      reference: "panel-readonly-link"
    })
    expect(link.status, link.text).toBe(201)
    const linkId: string = link.json.payload.payment_link
    const transactionId = await onlinePayment(shop, "panel-readonly", 25_000)
    await suite.hooks.waitFor((r) => r.json?.data?.payment_id === transactionId)
    const notifications = await admin(
      "GET",
      `/admin/v1/merchants/${shop.merchantId}/notifications?delivery=delivered`
    )
    expect(notifications.status, notifications.text).toBe(200)
    const notificationId: string = notifications.json.data[0].id
    const received = receivedBy(shop).length

    await withContext(async (context) => {
      const page = await signedIn(context, shop.readOnly)
      await expect(page.locator("#user-role").getAttribute("data-role")).resolves.toBe("read_only")
      const pages = [
        "/panel/payments?mode=test",
        `/panel/payments/${transactionId}?kind=online&mode=test`,
        "/panel/links?mode=test",
        "/panel/integrations",
        "/panel/webhooks?mode=test",
        "/panel/terminals"
      ]
      for (const path of pages) {
        const opened = await page.goto(suite.server.url + path)
        expect(opened?.status(), path).toBe(200)
        // Only the sign-out form and the filters (GET) are there.
        const forms = await page
          .locator("form[method=post]")
          .evaluateAll((forms) => forms.map((f: any) => f.getAttribute("action")))
        expect(forms, path).toEqual(["/panel/logout"])
      }
      await page.goto(`${suite.server.url}/panel/webhooks?mode=test`)
      expect(await page.locator("#webhook-test-url").innerText()).toBe(suite.hooks.url)
      await page.goto(`${suite.server.url}/panel/links?mode=test`)
      expect(await page.locator("#new-link").count()).toBe(0)
      expect(await page.locator(`#cancel-${linkId}`).count()).toBe(0)

      // The forms posted anyway, with the session's own CSRF token: each refused by the server.
      const csrf = (await page.locator("#sign-out-form input[name=csrf]").getAttribute("value"))!
      const params: Record<string, string> = {
        notification_id: notificationId,
        link_id: linkId,
        integration: "payment_button",
        mode: "test",
        webhook_mode: "test"
      }
      const bodies: Record<string, Record<string, string>> = {
        "/panel/links": { amount_type: "CLOSE", total_amount: "30000", currency: "COP" },
        "/panel/webhooks": { webhook_mode: "test", url: "http://127.0.0.1:9/elsewhere" },
        "/panel/terminals/api": { serial: "SN-READ-1", enabled: "true" },
        "/panel/terminals/charge-notifications": { serial: "SN-READ-1", enabled: "false" }
      }
      expect(PanelPage.MUTATING_ROUTES.length).toBeGreaterThanOrEqual(9)
      for (const route of PanelPage.MUTATING_ROUTES) {
        const path = route.path.replace(/:(\w+)/g, (_, name: string) => {
          const value = params[name]
          if (value === undefined) throw new Error(`no value for :${name} in ${route.path}`)
          return encodeURIComponent(value)
        })
        const reply = await page.request.post(suite.server.url + path, {
          form: { csrf, mode: "test", lang: "es", ...bodies[route.path] },
          maxRedirects: 0
        })
        // Refused for the role, not for the token: the read-only page, not the expired form's.
        expect(reply.status(), path).toBe(403)
        expect(await reply.text(), path).toContain(PanelText.messages.es.messagesPages.readOnly.text)
      }
    })

    // Nothing changed: the key works, the link is ACTIVE, the webhook is the same, the terminal off,
    // no notification was re-sent, and no event names the read-only user as its actor.
    expect((await withKey(shop.buttonKey, "GET", "/online/link/v1/payment_methods")).status).toBe(200)
    expect((await withKey(shop.buttonKey, "GET", `/online/link/v1/${linkId}`)).json.status).toBe("ACTIVE")
    const links = await admin("GET", `/admin/v1/merchants/${shop.merchantId}/links?mode=test`)
    expect(links.json.data).toHaveLength(1)
    await new Promise((r) => setTimeout(r, 1000))
    expect(receivedBy(shop)).toHaveLength(received)
    const merchantSteps = await history(`Merchant-${shop.merchantId}`)
    expect(merchantSteps.map((e) => e.type)).not.toContain("TerminalApiEnabled")
    expect(merchantSteps.filter((e) => e.actor === `panel:${shop.readOnly}`)).toEqual([])
    await withContext(async (context) => {
      const page = await signedIn(context, shop.fullAccess)
      await page.goto(`${suite.server.url}/panel/webhooks?mode=test`)
      await expect(page.locator("#webhook-test-url").innerText()).resolves.toBe(suite.hooks.url)
    })
  })

  it("on a phone (390 px) the panel's pages do not overflow sideways", async () => {
    const shop = await newShop("Artesanías del Pacífico, tejidos y cestería de la costa")
    await adminWebhook(shop, "test")
    const transactionId = await onlinePayment(
      shop,
      "pedido-con-una-referencia-bastante-larga-0001",
      1_250_000
    )
    await onlinePayment(shop, "panel-phone-2", 18_000)
    await suite.hooks.waitFor((r) => r.json?.data?.payment_id === transactionId)
    await withContext(
      async (context) => {
        const page = await signedIn(context, shop.fullAccess)
        const pages = [
          "/panel/payments?mode=test",
          `/panel/payments/${transactionId}?kind=online&mode=test`,
          "/panel/links?mode=test",
          "/panel/links/new?mode=test",
          "/panel/integrations",
          "/panel/webhooks?mode=test",
          "/panel/terminals"
        ]
        for (const path of pages) {
          await page.goto(suite.server.url + path)
          const { scrollWidth, innerWidth } = await widths(page)
          expect(innerWidth).toBe(390)
          expect(scrollWidth, path).toBeLessThanOrEqual(innerWidth)
        }
        await page.goto(`${suite.server.url}/panel/login`)
        expect((await widths(page)).scrollWidth).toBeLessThanOrEqual(390)
      },
      { width: 390 }
    )
  })

  it("signing out ends the session: the old cookie no longer opens the payments page", async () => {
    const shop = await newShop("Zapatería Paso Firme")
    await withContext(async (context) => {
      const page = await signedIn(context, shop.fullAccess)
      const cookie = (await context.cookies()).find((c) => c.name === "cobro_panel")!
      expect(cookie.httpOnly).toBe(true)
      expect(cookie.sameSite).toBe("Lax")
      const withOld = () =>
        fetch(`${suite.server.url}/panel/payments`, {
          headers: { cookie: `cobro_panel=${cookie.value}` },
          redirect: "manual"
        })
      expect((await withOld()).status).toBe(200)

      await page.locator("#sign-out").click()
      await page.waitForURL(/\/panel\/login/)
      expect((await context.cookies()).filter((c) => c.name === "cobro_panel")).toEqual([])
      const after = await withOld()
      expect(after.status).toBe(303)
      expect(after.headers.get("location")).toContain("/panel/login")
      // In a browser too: the old cookie put back leads to the sign-in form.
      await context.addCookies([cookie])
      await page.goto(`${suite.server.url}/panel/payments`)
      await page.waitForURL(/\/panel\/login/)
      await page.locator("#sign-in").waitFor()
    })
  })
})
