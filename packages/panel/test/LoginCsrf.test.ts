/**
 * The sign-in form's tokens (issue 31, item 11): genuine only when this server's key made them and
 * within their hour; any other text, another server's token, or a token with a part changed, is not.
 */
import { describe, expect, it } from "@effect/vitest"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as FastCheck from "effect/FastCheck"
import * as Redacted from "effect/Redacted"
import * as LoginCsrf from "../src/LoginCsrf.js"

const T0 = Date.UTC(2026, 10, 21, 15, 0, 0)
const at = (millis: number) => DateTime.unsafeMake(T0 + millis)
const HOUR = 3_600_000

const keyOf = (sealingKey: string) =>
  Effect.runSync(
    Effect.provide(LoginCsrf.Key, LoginCsrf.layer(Redacted.make(Buffer.from(sealingKey.padEnd(32, "-")))))
  )

const ours = keyOf("ours")
const theirs = keyOf("theirs")

describe("LoginCsrf", () => {
  it("a token is genuine under the key that made it, from its issue until its hour is over", () => {
    const token = LoginCsrf.mint(ours, at(0))
    expect(token).toMatch(/^[0-9]+\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}$/)
    expect(LoginCsrf.isGenuine(ours, token, at(0))).toBe(true)
    expect(LoginCsrf.isGenuine(ours, token, at(HOUR - 1))).toBe(true)
    expect(LoginCsrf.isGenuine(ours, token, at(HOUR))).toBe(false)
    // A node whose clock is a little behind takes it; a token from far in the future is refused.
    expect(LoginCsrf.isGenuine(ours, token, at(-60_000))).toBe(true)
    expect(LoginCsrf.isGenuine(ours, token, at(-HOUR))).toBe(false)
    expect(LoginCsrf.isGenuine(theirs, token, at(0))).toBe(false)
    expect(LoginCsrf.mint(ours, at(0))).not.toBe(token)
  })

  it.prop(
    "no text is genuine but one the key made: random texts, and a genuine token with any one character changed",
    [FastCheck.string({ maxLength: 90 }), FastCheck.nat(), FastCheck.constantFrom("0", "A", "_", "z")],
    ([text, position, replacement]) => {
      expect(LoginCsrf.isGenuine(ours, text, at(0))).toBe(false)
      const token = LoginCsrf.mint(ours, at(0))
      const i = position % token.length
      const changed = `${token.slice(0, i)}${replacement}${token.slice(i + 1)}`
      if (changed !== token && token[i] !== ".") {
        // A digit of the issue instant may change to another instant still within the hour, but
        // then the HMAC no longer matches.
        expect(LoginCsrf.isGenuine(ours, changed, at(0))).toBe(false)
      }
    }
  )
})
