/**
 * The hosted pages in a real browser (issue 6): Debian's Chromium driven by playwright-core against a
 * real server process (`npm start`'s script, PGlite, the virtual clock, development webhooks), with a
 * local webhook receiver, so that the payer's clicks, the link's status (B3), the payment (C5) and the
 * signed webhook are all observed from outside.
 */
import { verifySignature } from "@cobro/webhooks/Signature"
import { beforeAll, describe, expect, it } from "@effect/vitest"
import type { BrowserContext, Page } from "playwright-core"
import * as Suite from "./support/Suite.js"

const ADMIN_TOKEN = "browser-suite-admin-token"
const SHOP = "https://shop.example"

let key: string

const suite = Suite.make("cobro-browser-", { ADMIN_TOKEN, COBRO_CLOCK: "virtual" })
const call = suite.call
const admin = (method: string, path: string, body?: unknown) =>
  call(method, path, { auth: `Bearer ${ADMIN_TOKEN}`, body })
const api = (method: string, path: string, body?: unknown) =>
  call(method, path, { auth: `x-api-key ${key}`, body })

/** B2 through the API: the link's id and its `url`. */
const createLink = async (body: Record<string, unknown>) => {
  const reply = await api("POST", "/online/link/v1", body)
  expect(reply.status, reply.text).toBe(201)
  return { id: reply.json.payload.payment_link as string, url: reply.json.payload.url as string }
}
const linkRecord = async (id: string) => (await api("GET", `/online/link/v1/${id}`)).json

/** A browser context as a payer in Colombia; the merchant's shop answered by the test itself. */
const payerContext = async (options: { locale?: string; javaScriptEnabled?: boolean } = {}) => {
  const context = await suite.browser.newContext({
    locale: options.locale ?? "es-CO",
    javaScriptEnabled: options.javaScriptEnabled ?? true
  })
  await context.route(`${SHOP}/**`, (route) =>
    route.fulfill({ status: 200, contentType: "text/html", body: "<h1 id=shop>Back at the shop</h1>" })
  )
  return context
}

const withContext = async <A>(
  run: (context: BrowserContext) => Promise<A>,
  options: { locale?: string; javaScriptEnabled?: boolean } = {}
): Promise<A> => {
  const context = await payerContext(options)
  try {
    return await run(context)
  } finally {
    await context.close()
  }
}

const fillCard = async (page: Page, card = "4111111111111111") => {
  await page.getByLabel(/Tarjeta de crédito|Credit or debit card/).check()
  await page.locator("#card_number").fill(card)
  await page.locator("#card_name").fill("Ana Gómez")
  await page.locator("#card_expiry").fill("1230")
  await page.locator("#card_cvc").fill("123")
}

/** Runs `run` on a payer's page of the checkout at `url`, the approving card filled in (not paid yet). */
const withCardFilled = <A>(url: string, run: (page: Page) => Promise<A>) =>
  withContext(async (context) => {
    const page = await context.newPage()
    await page.goto(url)
    await fillCard(page)
    return run(page)
  })

beforeAll(async () => {
  const created = await admin("POST", "/admin/v1/merchants", { name: "Tostadora Andina" })
  expect(created.status, created.text).toBe(201)
  const merchantId = created.json.merchant_id as string
  key = created.json.keys.payment_button.test.identity_key
  const bounds = { min: 1000, max: 5_000_000 }
  const methods = await admin("PUT", `/admin/v1/merchants/${merchantId}/payment-methods`, {
    link: { CREDIT_CARD: bounds, PSE: bounds, BOTON_BANK: bounds, WALLET_A: bounds }
  })
  expect(methods.status, methods.text).toBe(200)
  const webhook = await admin("PUT", `/admin/v1/merchants/${merchantId}/webhook`, {
    url: suite.hooks.url,
    mode: "test"
  })
  expect(webhook.status, webhook.text).toBe(200)
  // One warm-up read: the log-backed directory answers the first lookup of a new key late.
  await api("GET", "/online/link/v1/payment_methods")
}, 180_000)

describe("the checkout page in Chromium", () => {
  it("a link created through the API is paid with an approving card: confirmation, PAID in B3, signed webhook", async () => {
    const link = await createLink({
      amount_type: "CLOSE",
      amount: { total_amount: 50_000 },
      description: "Café de origen, 500 g",
      reference: "pedido-approve"
    })
    await withContext(async (context) => {
      const page = await context.newPage()
      const opened = await page.goto(link.url)
      expect(opened?.status()).toBe(200)
      await expect(page.locator("#merchant-name").textContent()).resolves.toBe("Tostadora Andina")
      await expect(page.locator("#amount-total").innerText()).resolves.toContain("$ 50.000")
      expect(await page.locator("#sandbox-notice").isVisible()).toBe(true)
      await fillCard(page)
      await page.locator("#pay").click()
      await page.locator("#result[data-status=PAID]").waitFor()
      await expect(page.locator("#result-title").innerText()).resolves.toBe("¡Pago aprobado!")
    })
    const record = await linkRecord(link.id)
    expect([record.status, record.payment_method]).toEqual(["PAID", "CREDIT_CARD"])
    const hook = await suite.hooks.waitFor(
      (r) => r.json?.type === "SALE_APPROVED" && r.json?.data?.metadata?.reference === "pedido-approve"
    )
    expect(hook.json.data.payment_id).toBe(record.transaction_id)
    expect(verifySignature(hook.body, hook.signature, "")).toBe(true)
  })

  it("a declining card (sandbox 555042) shows the decline and leaves the link ACTIVE; SALE_REJECTED is notified", async () => {
    const link = await createLink({
      amount_type: "CLOSE",
      amount: { total_amount: 555_042 },
      reference: "pedido-decline"
    })
    await withCardFilled(link.url, async (page) => {
      await page.locator("#pay").click()
      await page.locator("#declined").waitFor()
      expect(await page.locator("#pay-form").isVisible()).toBe(true)
    })
    expect((await linkRecord(link.id)).status).toBe("ACTIVE")
    await suite.hooks.waitFor(
      (r) => r.json?.type === "SALE_REJECTED" && r.json?.data?.metadata?.reference === "pedido-decline"
    )
  })

  it("an OPEN link refuses an amount outside the method's bounds with a message, and takes one within", async () => {
    const link = await createLink({ amount_type: "OPEN", payment_methods: ["CREDIT_CARD"] })
    await withContext(
      async (context) => {
        const page = await context.newPage()
        await page.goto(link.url)
        await page.locator("#amount").fill("500")
        await fillCard(page)
        await page.locator("#pay").click()
        await page.locator("#amount-error").waitFor()
        await expect(page.locator("#amount-error").innerText()).resolves.toContain("COP 1,000")
        // The summary of errors takes the focus, so that a screen reader reads it first.
        await expect(page.evaluate(() => (globalThis as any).document.activeElement?.id)).resolves.toBe(
          "error-summary"
        )
        expect((await linkRecord(link.id)).transaction_id).toBeNull()
        await page.locator("#amount").fill("25000")
        await fillCard(page)
        await page.locator("#pay").click()
        await page.locator("#result[data-status=PAID]").waitFor()
      },
      { locale: "en-US" }
    )
    const record = await linkRecord(link.id)
    expect([record.status, record.total]).toEqual(["PAID", 25_000])
  })

  it("the 3DS challenge of a link (sandbox 555020): approve returns to callback_url, the link PAID", async () => {
    const link = await createLink({
      amount_type: "CLOSE",
      amount: { total_amount: 555_020 },
      callback_url: `${SHOP}/gracias?pedido=3ds`
    })
    await withCardFilled(link.url, async (page) => {
      await page.locator("#pay").click()
      await page.locator("#approve").waitFor()
      expect((await linkRecord(link.id)).status).toBe("PROCESSING")
      await page.locator("#approve").click()
      await page.waitForURL(`${SHOP}/gracias?pedido=3ds`)
    })
    expect((await linkRecord(link.id)).status).toBe("PAID")
  })

  it("without JavaScript the basic flow works: PSE with the bank list, the simulated bank, PAID", async () => {
    const link = await createLink({ amount_type: "CLOSE", amount: { total_amount: 80_000 } })
    await withContext(
      async (context) => {
        const page = await context.newPage()
        await page.goto(link.url)
        await page.locator("input[name=method][value=PSE]").check()
        await page.locator("#bank").selectOption("1007")
        await page.locator("#pay").click()
        await page.locator("#approve").waitFor()
        await page.locator("#approve").click()
        await page.locator("#result[data-status=PAID]").waitFor()
      },
      { javaScriptEnabled: false }
    )
    expect((await linkRecord(link.id)).status).toBe("PAID")
  })

  it("a link opened in two tabs cannot be paid twice", async () => {
    const link = await createLink({
      amount_type: "CLOSE",
      amount: { total_amount: 60_000 },
      reference: "pedido-two-tabs"
    })
    await withContext(async (context) => {
      const [first, second] = await Promise.all([context.newPage(), context.newPage()])
      await Promise.all([first.goto(link.url), second.goto(link.url)])
      await fillCard(first)
      await fillCard(second)
      await Promise.all([first.locator("#pay").click(), second.locator("#pay").click()])
      await Promise.all([first.waitForLoadState(), second.waitForLoadState()])
      const outcomes = await Promise.all(
        [first, second].map(async (page) => {
          await page.locator("#result, #status").first().waitFor()
          return page.locator("#result[data-status=PAID]").count()
        })
      )
      // One tab shows the confirmation; the other the link's state (paid, or being paid), no second payment.
      expect(outcomes.sort()).toEqual([0, 1])
    })
    const record = await linkRecord(link.id)
    expect(record.status).toBe("PAID")
    const hook = await suite.hooks.waitFor((r) => r.json?.data?.metadata?.reference === "pedido-two-tabs")
    expect(hook.json.data.payment_id).toBe(record.transaction_id)
    const payments = new Set(
      suite.hooks.received
        .filter((r) => r.json?.data?.metadata?.reference === "pedido-two-tabs")
        .map((r) => r.json.data.payment_id)
    )
    expect([...payments]).toEqual([record.transaction_id])
  })

  it("on a phone (390 px) nothing overflows sideways, every field has a label, no positive tabindex", async () => {
    const link = await createLink({ amount_type: "OPEN", description: "Aporte voluntario" })
    await withContext(async (context) => {
      const page = await context.newPage()
      await page.setViewportSize({ width: 390, height: 844 })
      await page.goto(link.url)
      const layout = await page.evaluate(() => {
        const document = (globalThis as any).document
        return {
          scrollWidth: document.documentElement.scrollWidth,
          unlabelled: [...document.querySelectorAll("input:not([type=hidden]), select")].filter(
            (el: any) => el.labels?.length === 0
          ).length,
          positiveTabindex: document.querySelectorAll("[tabindex]:not([tabindex='-1']):not([tabindex='0'])")
            .length
        }
      })
      expect(layout).toEqual({ scrollWidth: 390, unlabelled: 0, positiveTabindex: 0 })
    })
  })

  it("C4's 3DS challenge page (sandbox 555020) returns to the intent's callback_url; C5 shows APPROVED or REJECTED", async () => {
    for (const [decision, expected] of [
      ["approve", "APPROVED"],
      ["decline", "REJECTED"]
    ] as const) {
      const reference = `intent-3ds-${decision}`
      const intent = await api("POST", "/v1/payment-intent", {
        reference_id: reference,
        amount: { currency: "COP", total_amount: 555_020 },
        description: "Suscripción anual",
        callback_url: `${SHOP}/back?ref=${reference}`
      })
      expect(intent.status, intent.text).toBe(201)
      const attempt = await api("POST", "/v1/payment", {
        reference_id: reference,
        payment_method: { name: "CREDIT_CARD", card_number: "4111111111111111" }
      })
      expect(attempt.status, attempt.text).toBe(201)
      const next = attempt.json.next_actions ?? attempt.json.payload.next_actions
      expect(next.redirect_method).toBe("GET")
      await withContext(async (context) => {
        const page = await context.newPage()
        await page.goto(next.redirect_url)
        await page.locator(`#${decision}`).click()
        await page.waitForURL(`${SHOP}/back?ref=${reference}`)
        expect(await page.locator("#shop").isVisible()).toBe(true)
      })
      expect((await api("GET", `/v1/payment/${reference}`)).json.status).toBe(expected)
    }
  })

  it("an expired link shows that it expired and cannot be paid, even from a page opened before", async () => {
    const now = Date.parse((await admin("POST", "/admin/v1/clock/advance", { seconds: 0 })).json.now)
    const link = await createLink({
      amount_type: "CLOSE",
      amount: { total_amount: 70_000 },
      expiration_date: BigInt(now + 3_600_000) * 1_000_000n
    })
    await withCardFilled(link.url, async (page) => {
      const advanced = await admin("POST", "/admin/v1/clock/advance", { seconds: 7200 })
      expect(advanced.status, advanced.text).toBe(200)
      await page.locator("#pay").click()
      await page.locator("#status[data-status=EXPIRED]").waitFor()
      expect(await page.locator("#pay-form").count()).toBe(0)
      await page.goto(link.url)
      await page.locator("#status[data-status=EXPIRED]").waitFor()
    })
    const record = await linkRecord(link.id)
    expect([record.status, record.transaction_id]).toEqual(["EXPIRED", null])
  })
})
