import { it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as TestApp from "./support/TestApp.js"
it.live("debug", () =>
  Effect.gen(function* () {
    const m = yield* TestApp.createMerchantWithTerminal()
    console.log(JSON.stringify(m.created))
    const reply = yield* TestApp.send("GET", "/payments/payment-methods", { key: m.terminal.production })
    console.log(reply.status, reply.text)
  }).pipe(Effect.provide(TestApp.layer()))
)
