/**
 * The README's client example ("Integrate in five minutes") compiles against the
 * public entry point under the repository's compiler options, and does what it says against a real
 * server: creates a link, lists the merchant's payments, verifies a webhook the server's signing
 * made and refuses a forged one. Like `packages/domain/test/ReadmeExample.test.ts`, the example is
 * written inside the package (`build/`, ignored by git) so that `@cobro/client` resolves as a
 * user's would.
 */
import * as ExactJson from "@cobro/domain/ExactJson"
import * as NotificationApi from "@cobro/domain/NotificationApi"
import * as Signature from "@cobro/webhooks/Signature"
import { describe, expect, it, layer } from "@effect/vitest"
import * as Arbitrary from "effect/Arbitrary"
import * as Effect from "effect/Effect"
import * as FastCheck from "effect/FastCheck"
import * as Schema from "effect/Schema"
import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { vi } from "vitest"
import { Cobro } from "../src/Cobro.js"
import * as ReadmeExamples from "../../domain/test/support/ReadmeExamples.js"
import * as CobroServer from "./support/CobroServer.js"
import { eventually, givenMerchant, terminalSale } from "./support/Merchants.js"

/** The example: the first ```ts block of the README's "Integrate in five minutes". */
const SOURCE = ReadmeExamples.firstTsBlock("## Integrate in five minutes")
const dir = join(import.meta.dirname, "..", "build", "quickstart-example")
const file = join(dir, "Quickstart.ts")
mkdirSync(dir, { recursive: true })
writeFileSync(file, SOURCE)

describe("the quickstart", () => {
  it("is found in the README", () => {
    expect(SOURCE).toContain("@cobro/client")
  })

  it("type-checks with the repository's compiler options", () => {
    expect(ReadmeExamples.typeErrors(file)).toEqual([])
  }, 60_000)
})

layer(CobroServer.layer, { excludeTestServices: true, timeout: 120_000 })(
  "the quickstart against Cobro",
  (it) => {
    it.effect(
      "creates a link, lists the merchant's payments and verifies a webhook, as its comments say",
      () =>
        Effect.gen(function* () {
          const { url, adminToken } = yield* CobroServer.CobroServer
          const admin = new Cobro({ baseUrl: url, adminToken })
          const { merchant, keys } = yield* Effect.promise(() =>
            givenMerchant(admin, { name: "Tienda Quickstart", serial: "SN-QUICK" })
          )
          // A terminal sale, so that the merchant has a payment to list.
          const terminal = new Cobro({ baseUrl: url, apiKey: keys.terminal_api.test.identity_key })
          yield* Effect.promise(() => terminal.terminal.checkout(terminalSale("SN-QUICK", "order-quick")))
          const payment = yield* Effect.promise(() =>
            eventually(30_000, async () => (await admin.admin.payments.page({ merchant })).data[0])
          )

          Object.assign(process.env, {
            COBRO_URL: url,
            COBRO_API_KEY: keys.payment_button.test.identity_key,
            COBRO_ADMIN_TOKEN: adminToken,
            COBRO_MERCHANT_ID: merchant,
            COBRO_SECRET_KEY: "s3cret"
          })
          const lines: Array<string> = []
          const log = vi.spyOn(console, "log").mockImplementation((line) => void lines.push(String(line)))
          const example = yield* Effect.promise(() => import(file)).pipe(
            Effect.ensuring(Effect.sync(() => log.mockRestore()))
          )

          const links = yield* Effect.promise(() => admin.admin.links.page({ merchant }))
          expect(links.data).toHaveLength(1)
          expect(lines[0]).toBe(`link ${links.data[0]!.id}: pay at ${url}/checkout/${links.data[0]!.id}`)
          expect(lines[1]).toBe(`payment ${payment.id} terminal ${payment.status} 11900 COP`)

          const [notification] = FastCheck.sample(Arbitrary.make(NotificationApi.Notification), {
            numRuns: 1,
            seed: 3
          })
          const body = ExactJson.stringify(Schema.encodeSync(NotificationApi.Notification)(notification!))
          const headers = { [Signature.HEADER]: Signature.sign(body, "s3cret") }
          expect(example.onWebhook(body, headers)).toBe(200)
          expect(example.onWebhook(body, { [Signature.HEADER]: Signature.sign(body, "another") })).toBe(400)
        })
    )
  }
)
