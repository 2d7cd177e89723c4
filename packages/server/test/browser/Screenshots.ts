/**
 * Screenshots of the hosted checkout page (issue 6) and of the merchant panel (issue 22) for the
 * README: starts a real server on a temporary PGlite folder, creates a sandbox merchant, its links,
 * payments, terminal, webhook (a local receiver) and panel user through the API, and photographs the
 * pages with Debian's Chromium at desktop (1280 px) and phone (390 px) widths into docs/screenshots/.
 *
 *   node scripts/screenshots.mjs   (installs Chromium first where it is missing)
 */
import { spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Net from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import * as Chromium from "./support/Browser.js"
import * as WebhookReceiver from "./support/WebhookReceiver.js"

const root = Path.resolve(Path.dirname(fileURLToPath(import.meta.url)), "..", "..", "..", "..")
const out = Path.join(root, "docs", "screenshots")
const ADMIN = "screenshots-admin-token"

/**
 * `node scripts/start.mjs` on a free port until it prints its banner. (Not the suites'
 * `ServerProcess`: that module imports vitest's `expect`, which cannot load outside a vitest run.)
 */
const startServer = async (env: Record<string, string>) => {
  const port = await new Promise<number>((resolve) => {
    const probe = Net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as Net.AddressInfo
      probe.close(() => resolve(port))
    })
  })
  const child = spawn(process.execPath, [Path.join(root, "scripts", "start.mjs")], {
    cwd: root,
    env: { PATH: process.env["PATH"] ?? "", HOME: process.env["HOME"] ?? "", PORT: String(port), ...env },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let output = ""
  child.stderr.on("data", (chunk) => (output += chunk))
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout.on("data", (chunk) => {
      output += chunk
      const match = /Cobro is listening on (\S+)/.exec(output)
      if (match !== null) resolve(match[1]!)
    })
    child.once("exit", (code) => reject(new Error(`the server exited (${code}):\n${output}`)))
  })
  return {
    url,
    stop: () =>
      new Promise<void>((resolve) => {
        child.once("exit", () => resolve())
        child.kill("SIGTERM")
      })
  }
}
const PANEL_USER = { email: "ana@tostadora.example", password: "tostado medio, molido fino" }

/** The panel's pages photographed at both widths: name, path, and what to do before the picture. */
const panelPages = (ids: {
  readonly transactionId: string
}): ReadonlyArray<{ name: string; path: string; before?: (page: any) => Promise<void> }> => [
  { name: "panel-payments", path: "/panel/payments?mode=test" },
  {
    name: "panel-payment",
    path: `/panel/payments/${ids.transactionId}?kind=online&mode=test`,
    // The state after the last event, opened, as a merchant reading the history would.
    before: (page) =>
      page
        .locator("#history details")
        .last()
        .evaluate((d: any) => (d.open = true))
  },
  { name: "panel-links", path: "/panel/links?mode=test" },
  {
    name: "panel-link-form",
    path: "/panel/links/new?mode=test",
    before: async (page) => {
      await page.locator("#total_amount").fill("500")
      await page.locator("#description").fill("Café de origen Huila, 500 g")
      await page.locator("#reference").fill("pedido-1043")
      await page.locator("#create-link").click()
      await page.locator("#error-summary").waitFor()
    }
  },
  { name: "panel-integrations", path: "/panel/integrations" },
  { name: "panel-webhooks", path: "/panel/webhooks?mode=test" },
  { name: "panel-terminals", path: "/panel/terminals" }
]

const main = async () => {
  Fs.mkdirSync(out, { recursive: true })
  const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "cobro-shots-"))
  const hooks = await WebhookReceiver.start()
  const server = await startServer({
    DATA_DIR: Path.join(dir, "data"),
    ADMIN_TOKEN: ADMIN,
    COBRO_DEV_WEBHOOKS: "1"
  })
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
      { link: { CREDIT_CARD: bounds, PSE: bounds, WALLET_A: bounds }, terminal: { POS: true } },
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

    // The panel: a test webhook (a local receiver), a terminal enabled for the API, a few sandbox
    // payments of each kind (the link above was paid by the last checkout shot), and a user.
    const base = `/admin/v1/merchants/${merchant.merchant_id}`
    const admin = `Bearer ${ADMIN}`
    await call(`${base}/webhook`, admin, { url: hooks.url, mode: "test" }, "PUT")
    await call(`${base}/terminals`, admin, {
      terminal_model: "SMART_PRO",
      terminal_serial: "SP-2024-0117",
      name: "Caja principal"
    })
    await call(`${base}/terminals/SP-2024-0117`, admin, { api_enabled: true }, "PATCH")
    await call(`${base}/terminals`, admin, {
      terminal_model: "SMART_PRO",
      terminal_serial: "SP-2024-0342",
      name: "Barra del segundo piso"
    })
    await call(`${base}/users`, admin, { ...PANEL_USER, role: "full_access" })
    const terminalKey = `x-api-key ${merchant.keys.terminal_api.test.identity_key}`
    await call("/payments/app-checkout", terminalKey, {
      amount: { currency: "COP", total_amount: 38_500, tip_amount: 3_500, taxes: [] },
      user_email: "caja@tostadora.example",
      payment_method: "POS",
      terminal_model: "SMART_PRO",
      terminal_serial: "SP-2024-0117",
      reference: "mesa-12"
    })
    const online = async (reference: string, total: number) => {
      await call("/v1/payment-intent", key, {
        reference_id: reference,
        amount: { currency: "COP", total_amount: total },
        description: "Suscripción mensual de café",
        callback_url: "https://shop.example/back"
      })
      return call("/v1/payment", key, {
        reference_id: reference,
        payer: { person_type: "NATURAL_PERSON", name: "Ana Gómez", email: "ana@example.com" },
        payment_method: { name: "CREDIT_CARD", card_number: "4111111111111111", installments: 1 }
      })
    }
    const approved = await online("suscripcion-0007", 64_000)
    await online("suscripcion-0008", 555_042)
    await call("/online/link/v1", key, {
      amount_type: "CLOSE",
      amount: { total_amount: 129_900 },
      description: "Kit de métodos: prensa francesa y 250 g",
      reference: "pedido-1044"
    })
    // The approved payment's notification delivered, so that its page shows an attempt.
    await hooks.waitFor((r) => r.json?.data?.payment_id === approved.transaction_id)
    await new Promise((r) => setTimeout(r, 1000))

    for (const width of [1280, 390]) {
      const suffix = width < 600 ? "phone" : "desktop"
      const context = await browser.newContext({
        locale: "es-CO",
        viewport: { width, height: width < 600 ? 844 : 900 },
        deviceScaleFactor: 1
      })
      const page = await context.newPage()
      const shoot = async (name: string) => {
        const file = Path.join(out, `${name}-${suffix}.png`)
        await page.screenshot({ path: file, fullPage: true })
        console.log(`wrote ${Path.relative(root, file)}`)
      }
      await page.goto(`${server.url}/panel/login`)
      await shoot("panel-login")
      await page.locator("#email").fill(PANEL_USER.email)
      await page.locator("#password").fill(PANEL_USER.password)
      await page.locator("#sign-in").click()
      await page.waitForURL(/\/panel\/payments/)
      for (const shot of panelPages({ transactionId: approved.transaction_id })) {
        await page.goto(server.url + shot.path)
        if (shot.before) await shot.before(page)
        await shoot(shot.name)
      }
      await context.close()
    }
  } finally {
    await browser.close()
    await server.stop()
    await hooks.close()
    Fs.rmSync(dir, { recursive: true, force: true })
  }
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
