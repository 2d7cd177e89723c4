/**
 * What the auditor's tools show of the log (issue 31, item 10): event data and states with their
 * sealed secrets redacted, everything else as it is, and the events themselves untouched.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Histories from "@cobro/domain/Histories"
import { MerchantId } from "@cobro/domain/Ids"
import * as Merchant from "@cobro/domain/Merchant"
import * as PanelUser from "@cobro/domain/PanelUser"
import { IdentityKeyHash, SealedSecret } from "@cobro/domain/SigningKey"
import * as DateTime from "effect/DateTime"
import * as Either from "effect/Either"
import * as FastCheck from "effect/FastCheck"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"

const AT = DateTime.unsafeMake("2026-11-21T15:00:00Z")
const SEALED = "sealed$v1$c2NyeXB0JDE2Mzg0JDgkMQ"

/** An event as the log stores it: its aggregate's encoding, as JSON. */
const stored = <A, I>(schema: Schema.Schema<A, I>, event: A) =>
  JSON.parse(JSON.stringify(Schema.encodeSync(schema)(event)))

const created = new PanelUser.PanelUserCreated({
  userId: PanelUser.userIdOf("ana@cafe.example"),
  merchantId: MerchantId.make("MER_1"),
  email: PanelUser.Email.make("ana@cafe.example"),
  role: "full_access",
  passwordHash: Redacted.make(SEALED),
  createdAt: AT
})

const keyPair = (n: number) => ({
  identityKeyHash: IdentityKeyHash.make(String(n).repeat(64)),
  secretKey: SealedSecret.make(`sealed-key-${n}`)
})

/** Whether a JSON value holds a member named `name` anywhere. */
const holds = (value: unknown, name: string): boolean =>
  Array.isArray(value)
    ? value.some((v) => holds(v, name))
    : typeof value === "object" && value !== null
      ? Object.entries(value).some(([k, v]) => k === name || holds(v, name))
      : false

describe("Histories.redact (issue 31, item 10)", () => {
  it("a panel user's sealed password hash is redacted in its events' data and in its state, the rest shown as stored", () => {
    const data = stored(PanelUser.Event, created)
    expect(data.passwordHash).toBe(SEALED)
    expect(Histories.redact(data)).toStrictEqual({ ...data, passwordHash: "<redacted>" })
    const changed = stored(
      PanelUser.Event,
      new PanelUser.PasswordChanged({ passwordHash: Redacted.make(`${SEALED}2`), at: AT })
    )
    expect(Histories.redact(changed)).toStrictEqual({ ...changed, passwordHash: "<redacted>" })
    const steps = Either.getOrThrow(
      Histories.replay(PanelUser.PanelUser, [
        {
          eventId: "e1",
          streamId: `PanelUser-${created.userId}`,
          streamVersion: 1,
          globalPosition: 1n,
          type: "PanelUserCreated",
          schemaVersion: 1,
          data,
          metadata: {},
          recordedAt: new Date("2026-11-21T15:00:00Z")
        } as never
      ])
    )
    const state = Histories.redact(Histories.toJson(steps[0]!.state)) as Record<string, unknown>
    expect(state).toMatchObject({ _tag: "ACTIVE", email: "ana@cafe.example", passwordHash: "<redacted>" })
    expect(JSON.stringify(state)).not.toContain(SEALED)
    // Showing is not changing: the event's data is the log's, as it was.
    expect(data.passwordHash).toBe(SEALED)
  })

  it("a merchant's sealed secret keys are redacted wherever they sit in its events; the identity key hashes are shown", () => {
    const activated = stored(
      Merchant.Event,
      new Merchant.IntegrationActivated({
        integration: "terminal_api",
        production: keyPair(1),
        test: keyPair(2),
        at: AT
      })
    )
    expect(Histories.redact(activated)).toStrictEqual({
      ...activated,
      production: { identityKeyHash: "1".repeat(64), secretKey: "<redacted>" },
      test: { identityKeyHash: "2".repeat(64), secretKey: "<redacted>" }
    })
    const rotated = stored(
      Merchant.Event,
      new Merchant.KeyRotated({
        integration: "terminal_api",
        mode: "test",
        revokedIdentityKeyHash: IdentityKeyHash.make("2".repeat(64)),
        keyPair: keyPair(3),
        at: AT
      })
    )
    expect(JSON.stringify(Histories.redact(rotated))).not.toContain("sealed-key-3")
    expect(Histories.redact(rotated)).toMatchObject({ keyPair: { identityKeyHash: "3".repeat(64) } })
  })

  it("a member named __proto__ is shown as a member, its secrets redacted, never as a prototype", () => {
    const shown = Histories.redact(JSON.parse(`{"__proto__":{"passwordHash":"sealed","a":1}}`)) as object
    expect(Object.getPrototypeOf(shown)).toBe(Object.prototype)
    expect(JSON.stringify(shown)).toBe(`{"__proto__":{"passwordHash":"<redacted>","a":1}}`)
  })

  it.prop(
    "redaction leaves no secret member's value, changes nothing else, and is idempotent",
    [
      FastCheck.jsonValue(),
      FastCheck.constantFrom(...Histories.SECRET_MEMBERS),
      FastCheck.string({ minLength: 1 }),
      FastCheck.array(FastCheck.string({ minLength: 1, maxLength: 4 }), { maxLength: 3 })
    ],
    ([value, secret, sealed, path]) => {
      // The secret, planted under `path` in an object that also holds `value`.
      const planted = path.reduceRight<unknown>((inner, key) => ({ [key]: inner, other: value }), {
        [secret]: sealed,
        value
      })
      const before = JSON.stringify(planted)
      const shown = Histories.redact(planted)
      expect(JSON.stringify(planted)).toBe(before)
      expect(Histories.redact(shown)).toStrictEqual(shown)
      // Taking the secret members out of both leaves the same value.
      const without = (v: unknown): unknown =>
        Array.isArray(v)
          ? v.map(without)
          : typeof v === "object" && v !== null
            ? Object.fromEntries(
                Object.entries(v)
                  .filter(([k]) => !Histories.SECRET_MEMBERS.has(k))
                  .map(([k, m]) => [k, without(m)])
              )
            : v
      expect(without(shown)).toStrictEqual(without(planted))
      const secrets: Array<unknown> = []
      const collect = (v: unknown): void => {
        if (Array.isArray(v)) v.forEach(collect)
        else if (typeof v === "object" && v !== null) {
          for (const [k, m] of Object.entries(v)) {
            if (Histories.SECRET_MEMBERS.has(k)) secrets.push(m)
            else collect(m)
          }
        }
      }
      collect(shown)
      expect(holds(shown, secret)).toBe(true)
      expect(secrets.every((s) => s === Histories.REDACTED || s === null)).toBe(true)
    }
  )
})
