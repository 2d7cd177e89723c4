/**
 * Screenshots of the hosted checkout page for the README (issue 6): starts a real server on a
 * temporary PGlite folder, creates a sandbox merchant and links through the API, and photographs the
 * pages with Debian's Chromium at desktop (1280 px) and phone (390 px) widths into docs/screenshots/.
 *
 *   node scripts/screenshots.mjs   (installs Chromium first where it is missing)
 */
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import * as ServerProcess from "../support/ServerProcess.js"
import * as Chromium from "./support/Browser.js"

const root = Path.resolve(Path.dirname(fileURLToPath(import.meta.url)), "..", "..", "..", "..")
const out = Path.join(root, "docs", "screenshots")
const ADMIN = "screenshots-admin-token"

const main = async () => {
  Fs.mkdirSync(out, { recursive: true })
  const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "cobro-shots-"))
  const server = await ServerProcess.startProcess({ DATA_DIR: Path.join(dir, "data"), ADMIN_TOKEN: ADMIN })
  const browser = await Chromium.launch()
  try {
    const call = async (path: string, auth: string, body: unknown, method = "POST") => {
      const response = await fetch(server.url + path, {
        method,
        headers: { authorization: auth, "content-type": "application/json" },
        body: JSON.stringify(body)
      })
      const json: any = await response.json()
      if (!response.ok) throw new Error(`${path}: ${response.status} ${JSON.stringify(json)}`)
      return json
    }
    const merchant = await call("/admin/v1/merchants", `Bearer ${ADMIN}`, { name: "Tostadora Andina" })
    const bounds = { min: 1000, max: 5_000_000 }
    await call(
      `/admin/v1/merchants/${merchant.merchant_id}/payment-methods`,
      `Bearer ${ADMIN}`,
      { link: { CREDIT_CARD: bounds, PSE: bounds, WALLET_A: bounds } },
      "PUT"
    )
    const key = `x-api-key ${merchant.keys.payment_button.test.identity_key}`
    const closeLink = await call("/online/link/v1", key, {
      amount_type: "CLOSE",
      amount: { total_amount: 89_900, taxes: [{ type: "VAT", base: 75_546, value: 14_354 }] },
      description: "Café de origen Huila, 500 g, molido medio",
      reference: "pedido-1042"
    })
    const openLink = await call("/online/link/v1", key, {
      amount_type: "OPEN",
      description: "Aporte a la cooperativa cafetera",
      payment_methods: ["PSE", "CREDIT_CARD"]
    })

    const shots: Array<{
      name: string
      url: string
      width: number
      locale: string
      before?: (page: any) => Promise<void>
    }> = [
      { name: "checkout-desktop", url: closeLink.payload.url, width: 1280, locale: "es-CO" },
      { name: "checkout-phone", url: closeLink.payload.url, width: 390, locale: "es-CO" },
      {
        name: "checkout-open-errors-phone",
        url: openLink.payload.url,
        width: 390,
        locale: "en-US",
        before: async (page) => {
          await page.locator("#amount").fill("500")
          await page.locator("input[name=method][value=PSE]").check()
          await page.locator("#pay").click()
          await page.locator("#error-summary").waitFor()
        }
      },
      {
        name: "checkout-paid-desktop",
        url: closeLink.payload.url,
        width: 1280,
        locale: "en-US",
        before: async (page) => {
          await page.locator("input[name=method][value=CREDIT_CARD]").check()
          await page.locator("#card_number").fill("4111111111111111")
          await page.locator("#card_name").fill("Ana Gómez")
          await page.locator("#card_expiry").fill("1230")
          await page.locator("#card_cvc").fill("123")
          await page.locator("#pay").click()
          await page.locator("#result[data-status=PAID]").waitFor()
        }
      }
    ]
    for (const shot of shots) {
      const context = await browser.newContext({
        locale: shot.locale,
        viewport: { width: shot.width, height: shot.width < 600 ? 844 : 900 },
        deviceScaleFactor: 1
      })
      const page = await context.newPage()
      await page.goto(shot.url)
      if (shot.before) await shot.before(page)
      const file = Path.join(out, `${shot.name}.png`)
      await page.screenshot({ path: file, fullPage: true })
      console.log(`wrote ${Path.relative(root, file)}`)
      await context.close()
    }
  } finally {
    await browser.close()
    await server.stop()
    Fs.rmSync(dir, { recursive: true, force: true })
  }
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
