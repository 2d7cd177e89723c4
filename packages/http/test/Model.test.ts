/**
 * A model-based property test of the link and online APIs (B2, B3, C1–C9, the challenge page, the
 * refund review and the virtual clock) through the real handler on a socket: fast-check commands
 * drive the service and check every answer against a plain model (issue 4, "Tests").
 *
 * The model is written here from the spec and docs/spec-decisions.md (I1–I9, P1–P6, R1–R5) and the
 * online decisions O1–O14, not from the deciders, so that a decider or use-case bug shows up as a
 * difference. Three scopes share one app: merchant A with its test key, A with its production key,
 * and merchant B with its test key; every command may name another scope's id (isolation).
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as fc from "effect/FastCheck"
import type * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Bodies from "./support/Bodies.js"
import * as Calls from "./support/Calls.js"
import * as TestApp from "./support/TestApp.js"
import * as TestClock from "./support/TestClock.js"

// ---------------------------------------------------------------------------------------------
// The model
// ---------------------------------------------------------------------------------------------

type ScopeName = "A.test" | "A.live" | "B.test"
const SCOPES: ReadonlyArray<ScopeName> = ["A.test", "A.live", "B.test"]
const isSandbox = (scope: ScopeName): boolean => scope.endsWith(".test")

/** The link methods every merchant of the run offers (B1). */
const LINK_MIN = 1_000
const LINK_MAX = 5_000_000

interface LinkM {
  readonly id: string
  readonly scope: ScopeName
  readonly amountType: "OPEN" | "CLOSE"
  readonly total: number
  readonly reference: string
  readonly createdAt: number
  /** Exact nanoseconds, or none. */
  readonly expiresAt: bigint | undefined
}

interface IntentM {
  readonly scope: ScopeName
  readonly reference: string
  status: "ACTIVE" | "PROCESSING" | "PAID"
  total: number
  callback: boolean
  transaction: string | undefined
}

interface RefundM {
  status: "PROCESSING" | "APPROVED" | "REJECTED"
  readonly requestedAt: number
  dateApplied: number | undefined
}

interface PaymentM {
  readonly transaction: string
  readonly scope: ScopeName
  readonly reference: string
  readonly method: "CREDIT_CARD" | "PSE"
  readonly total: number
  status: "RUNNING" | "APPROVED" | "REJECTED" | "VOIDED" | "REFUNDED"
  approvedAt: number | undefined
  /** The challenge page's path and the decision recorded there, for a 3DS challenge or a bank redirect. */
  challenge: { readonly path: string; decision: "approve" | "decline" | undefined } | undefined
  refund: RefundM | undefined
}

interface Model {
  now: number
  readonly links: Array<LinkM>
  readonly intents: Array<IntentM>
  readonly payments: Array<PaymentM>
}

const HOUR = 3_600_000
const DAY = 24 * HOUR
const BOGOTA = -5 * HOUR
const REVIEW_MS = 60_000

const bogotaDay = (ms: number): number => Math.floor((ms + BOGOTA) / DAY)
/** P5: the same Bogotá day as the approval, strictly before 21:00 Bogotá. */
const voidable = (approvedAt: number, now: number): boolean =>
  bogotaDay(approvedAt) === bogotaDay(now) && now + BOGOTA - bogotaDay(now) * DAY < 21 * HOUR
/** ISO 8601 with the Bogotá offset, as C5 and C9 write dates. */
const bogotaIso = (ms: number): string => new Date(ms + BOGOTA).toISOString().replace("Z", "-05:00")

/** O7: a sandbox refund is approved 60 s after its request, dated then. Idempotent. */
const sync = (model: Model, payment: PaymentM): void => {
  const refund = payment.refund
  if (
    refund !== undefined &&
    refund.status === "PROCESSING" &&
    isSandbox(payment.scope) &&
    model.now >= refund.requestedAt + REVIEW_MS
  ) {
    refund.status = "APPROVED"
    refund.dateApplied = refund.requestedAt + REVIEW_MS
    payment.status = "REFUNDED"
  }
}

/** P2 and O4, O5: what the acquirer answers an attempt. */
const outcomeOf = (
  scope: ScopeName,
  method: PaymentM["method"],
  total: number
): "APPROVED" | "REJECTED" | "CHALLENGE" => {
  if (method === "PSE") return "CHALLENGE"
  if (!isSandbox(scope)) return "APPROVED"
  if (total === 555002 || total === 555042) return "REJECTED"
  if (total === 555020) return "CHALLENGE"
  return "APPROVED"
}

const findIntent = (model: Model, scope: ScopeName, reference: string) =>
  model.intents.find((i) => i.scope === scope && i.reference === reference)

/** An entity chosen by index, or none (an unknown id) for a negative index or an empty list. */
const pickFrom = <A>(items: ReadonlyArray<A>, pick: number): A | undefined =>
  pick < 0 || items.length === 0 ? undefined : items[pick % items.length]

/**
 * Which entity a command names and with which key: `pick` indexes the model's list (-1: an id that
 * does not exist); `as` is the scope whose key is sent, or `undefined` for the entity's own scope.
 */
interface Target {
  readonly pick: number
  readonly as: ScopeName | undefined
  /** For payments: pick among the APPROVED ones (C9: the refunded ones) when there are any. */
  readonly approved: boolean
}

const showTarget = (kind: string, target: Target) =>
  `${target.pick < 0 ? `unknown ${kind}` : `${target.approved && kind === "payment" ? "approved " : ""}${kind}#${target.pick}`}${target.as === undefined ? "" : ` as ${target.as}`}`

/** The entity a target names and the scope of the key sent. */
const resolve = <A extends { readonly scope: ScopeName }>(items: ReadonlyArray<A>, target: Target) => {
  const item = pickFrom(items, target.pick)
  return { item, scope: target.as ?? item?.scope ?? "A.test" }
}

/** The payment a target names: among those `preferred` when it asks for one and there are some. */
const resolvePayment = (
  model: Model,
  target: Target,
  preferred: (payment: PaymentM) => boolean = (p) => p.status === "APPROVED"
) => {
  const candidates = model.payments.filter(preferred)
  return resolve(target.approved && candidates.length > 0 ? candidates : model.payments, target)
}

/** The reference of the intent a target names (another scope may hold the same reference), or an unknown one. */
const resolveIntent = (model: Model, target: Target) => {
  const { item, scope } = resolve(model.intents, target)
  const reference = item?.reference ?? "order-404"
  return { scope, reference, intent: findIntent(model, scope, reference) }
}

// ---------------------------------------------------------------------------------------------
// The real system
// ---------------------------------------------------------------------------------------------

interface Real {
  readonly keys: Readonly<Record<ScopeName, string>>
  readonly send: (
    method: "GET" | "POST" | "PUT",
    path: string,
    options?: TestApp.SendOptions
  ) => Promise<TestApp.Reply>
  readonly logSize: () => Promise<number>
}

type Command = fc.AsyncCommand<Model, Real>

const show = (reply: TestApp.Reply) => `HTTP ${reply.status} ${reply.text.slice(0, 400)}`

const expectStatus = (reply: TestApp.Reply, status: number) => expect(reply.status, show(reply)).toBe(status)

/** An error answer in the envelope, with its code. */
const expectError = (reply: TestApp.Reply, status: number, code: string) => {
  expectStatus(reply, status)
  expect(reply.json?.payload, show(reply)).toEqual({})
  expect(reply.json?.errors?.[0]?.code, show(reply)).toBe(code)
}

/** A 404 that leaves the log as it was: an id of another scope reads exactly as an unknown one. */
const expectNotFound = async (real: Real, before: number, reply: TestApp.Reply, code: string) => {
  expectError(reply, 404, code)
  expect(await real.logSize(), "a 404 must store nothing").toBe(before)
}

const intentBody = (reference: string, total: number, callback: boolean) => ({
  reference_id: reference,
  amount: { currency: "COP", total_amount: total },
  description: "Order",
  ...(callback ? { callback_url: "https://shop.example/back" } : {})
})

const attemptBody = (reference: string, method: PaymentM["method"]) =>
  method === "PSE"
    ? { reference_id: reference, payment_method: { name: "PSE" } }
    : Bodies.cardAttempt(reference)

// ---------------------------------------------------------------------------------------------
// Commands: links (B2, B3)
// ---------------------------------------------------------------------------------------------

class CreateLink implements Command {
  constructor(
    readonly scope: ScopeName,
    readonly amountType: "OPEN" | "CLOSE",
    readonly total: number,
    readonly expiresInSeconds: number | undefined,
    readonly withReference: boolean
  ) {}
  check = () => true
  async run(model: Model, real: Real) {
    const reference = this.withReference ? `shop_${model.links.length}` : undefined
    // 123 ns past the millisecond: a value a double cannot hold, kept exact end to end.
    const expiresAt =
      this.expiresInSeconds === undefined
        ? undefined
        : BigInt(model.now + this.expiresInSeconds * 1000) * 1_000_000n + 123n
    const body = {
      amount_type: this.amountType,
      ...(this.amountType === "CLOSE" ? { amount: { total_amount: this.total } } : {}),
      ...(reference === undefined ? {} : { reference }),
      ...(expiresAt === undefined ? {} : { expiration_date: expiresAt })
    }
    const before = await real.logSize()
    const reply = await real.send("POST", "/online/link/v1", { key: real.keys[this.scope], body })
    if (this.amountType === "CLOSE" && (this.total < LINK_MIN || this.total > LINK_MAX)) {
      expectError(reply, 400, "ValidationError")
      expect(reply.json.errors[0].field).toBe("amount.total_amount")
      expect(await real.logSize(), "a rejected link must store nothing").toBe(before)
      return
    }
    expectStatus(reply, 201)
    const id: string = reply.json.payload.payment_link
    expect(id).toMatch(/^LNK_[A-Za-z0-9]+$/)
    expect(
      model.links.some((l) => l.id === id),
      "a fresh link id"
    ).toBe(false)
    expect(reply.json.payload.url.endsWith(`/${id}`)).toBe(true)
    model.links.push({
      id,
      scope: this.scope,
      amountType: this.amountType,
      total: this.amountType === "CLOSE" ? this.total : 0,
      reference: reference ?? id,
      createdAt: model.now,
      expiresAt
    })
  }
  toString = () =>
    `CreateLink(${this.scope}, ${this.amountType}${this.amountType === "CLOSE" ? ` ${this.total}` : ""}${
      this.expiresInSeconds === undefined ? "" : `, expires in ${this.expiresInSeconds}s`
    }${this.withReference ? ", reference" : ""})`
}

class ReadLink implements Command {
  constructor(readonly target: Target) {}
  check = () => true
  async run(model: Model, real: Real) {
    const { item: link, scope } = resolve(model.links, this.target)
    const before = await real.logSize()
    const reply = await real.send("GET", `/online/link/v1/${link?.id ?? "LNK_404"}`, {
      key: real.keys[scope]
    })
    if (link === undefined || link.scope !== scope) {
      return expectNotFound(real, before, reply, "LinkNotFound")
    }
    expectStatus(reply, 200)
    const overdue = link.expiresAt !== undefined && BigInt(model.now) * 1_000_000n >= link.expiresAt
    expect(reply.json).toMatchObject({
      api_version: 1,
      id: link.id,
      total: link.total,
      subtotal: link.total,
      tip_amount: 0,
      taxes: [],
      status: overdue ? "EXPIRED" : "ACTIVE",
      payment_method: "",
      transaction_id: null,
      amount_type: link.amountType,
      is_sandbox: isSandbox(link.scope),
      reference: link.reference
    })
    expect(BigInt(reply.json.creation_date)).toBe(BigInt(link.createdAt) * 1_000_000n)
    if (link.expiresAt === undefined) expect(reply.json.expiration_date).toBeNull()
    else expect(BigInt(reply.json.expiration_date)).toBe(link.expiresAt)
  }
  toString = () => `ReadLink(${showTarget("link", this.target)})`
}

// ---------------------------------------------------------------------------------------------
// Commands: intents (C1–C3)
// ---------------------------------------------------------------------------------------------

class CreateIntent implements Command {
  constructor(
    readonly scope: ScopeName,
    readonly reference: string,
    readonly total: number,
    readonly callback: boolean
  ) {}
  check = () => true
  async run(model: Model, real: Real) {
    const before = await real.logSize()
    const reply = await real.send("POST", "/v1/payment-intent", {
      key: real.keys[this.scope],
      body: intentBody(this.reference, this.total, this.callback)
    })
    if (findIntent(model, this.scope, this.reference) !== undefined) {
      expectError(reply, 409, "IntentAlreadyExists")
      expect(await real.logSize(), "a duplicate must store nothing").toBe(before)
      return
    }
    expectStatus(reply, 201)
    expect(reply.json).toMatchObject({
      reference_id: this.reference,
      amount: { currency: "COP", total_amount: this.total, tip_amount: 0, taxes: [] },
      status: "ACTIVE",
      test: isSandbox(this.scope),
      creation_date: bogotaIso(model.now)
    })
    expect(reply.json.service_transaction_id).toBeUndefined()
    model.intents.push({
      scope: this.scope,
      reference: this.reference,
      status: "ACTIVE",
      total: this.total,
      callback: this.callback,
      transaction: undefined
    })
  }
  toString = () =>
    `CreateIntent(${this.scope}, ${this.reference}, ${this.total}${this.callback ? ", callback" : ""})`
}

class ReadIntent implements Command {
  constructor(readonly target: Target) {}
  check = () => true
  async run(model: Model, real: Real) {
    const { intent, reference, scope } = resolveIntent(model, this.target)
    const before = await real.logSize()
    const reply = await real.send("GET", `/v1/payment-intent/${reference}`, { key: real.keys[scope] })
    if (intent === undefined) return expectNotFound(real, before, reply, "PaymentNotFound")
    expectStatus(reply, 200)
    expect(reply.json).toMatchObject({
      reference_id: reference,
      amount: { total_amount: intent.total },
      status: intent.status,
      test: isSandbox(scope)
    })
    expect(reply.json.service_transaction_id).toBe(intent.transaction)
    expect(reply.json.callback_url).toBe(intent.callback ? "https://shop.example/back" : undefined)
  }
  toString = () => `ReadIntent(${showTarget("intent", this.target)})`
}

class UpdateIntent implements Command {
  constructor(
    readonly target: Target,
    readonly total: number,
    readonly callback: boolean
  ) {}
  check = () => true
  async run(model: Model, real: Real) {
    const { intent, reference, scope } = resolveIntent(model, this.target)
    const before = await real.logSize()
    const reply = await real.send("PUT", "/v1/payment-intent", {
      key: real.keys[scope],
      body: intentBody(reference, this.total, this.callback)
    })
    if (intent === undefined) return expectNotFound(real, before, reply, "PaymentNotFound")
    if (intent.status === "PAID") return expectError(reply, 409, "IntentAlreadyPaid")
    if (intent.status === "PROCESSING" && intent.total !== this.total) {
      return expectError(reply, 409, "IntentAmountLocked")
    }
    expectStatus(reply, 200)
    expect(reply.json).toMatchObject({
      reference_id: reference,
      amount: { total_amount: this.total },
      status: intent.status
    })
    intent.total = this.total
    intent.callback = this.callback
  }
  toString = () =>
    `UpdateIntent(${showTarget("intent", this.target)}, ${this.total}${this.callback ? ", callback" : ""})`
}

// ---------------------------------------------------------------------------------------------
// Commands: attempts and the challenge page (C4, C5)
// ---------------------------------------------------------------------------------------------

/** C4 with the key of `scope` on `reference`, checked against the model's intent of that scope. */
const attemptOn = async (
  model: Model,
  real: Real,
  scope: ScopeName,
  reference: string,
  method: PaymentM["method"]
) => {
  const intent = findIntent(model, scope, reference)
  const before = await real.logSize()
  const reply = await real.send("POST", "/v1/payment", {
    key: real.keys[scope],
    body: attemptBody(reference, method)
  })
  if (intent === undefined) return expectNotFound(real, before, reply, "PaymentNotFound")
  if (intent.status !== "ACTIVE") {
    expectError(reply, 409, "IntentNotInState")
    expect(await real.logSize(), "a refused attempt must store nothing").toBe(before)
    return
  }
  if (method === "PSE" && !intent.callback) {
    expectError(reply, 400, "CallbackUrlRequired")
    expect(await real.logSize(), "a refused attempt must store nothing").toBe(before)
    return
  }
  expectStatus(reply, 201)
  const outcome = outcomeOf(scope, method, intent.total)
  let transaction: string
  let challenge: PaymentM["challenge"] = undefined
  if (outcome === "CHALLENGE" && method === "CREDIT_CARD") {
    const payload = reply.json.payload
    expect(reply.json.errors).toEqual([])
    expect(payload).toMatchObject({ status: "running", status_detail: "pending_challenge" })
    expect(payload.next_actions.redirect_method).toBe("GET")
    transaction = payload.transaction_id
    challenge = { path: new URL(payload.next_actions.redirect_url).pathname, decision: undefined }
    expect(challenge.path).toBe(`/challenge/3ds/${transaction}/${payload.uuid_token}`)
  } else if (outcome === "CHALLENGE") {
    expect(reply.json).toMatchObject({ status: "RUNNING", next_actions: { redirect_method: "GET" } })
    transaction = reply.json.transaction_id
    challenge = { path: new URL(reply.json.next_actions.redirect_url).pathname, decision: undefined }
  } else {
    expect(reply.json).toEqual({ transaction_id: expect.any(String), status: "RUNNING" })
    transaction = reply.json.transaction_id
  }
  expect(transaction).toMatch(/^TRX_/)
  expect(
    model.payments.some((p) => p.transaction === transaction),
    "a fresh transaction id"
  ).toBe(false)
  model.payments.push({
    transaction,
    scope,
    reference,
    method,
    total: intent.total,
    status: outcome === "CHALLENGE" ? "RUNNING" : outcome,
    approvedAt: outcome === "APPROVED" ? model.now : undefined,
    challenge,
    refund: undefined
  })
  intent.transaction = transaction
  intent.status = outcome === "APPROVED" ? "PAID" : outcome === "REJECTED" ? "ACTIVE" : "PROCESSING"
}

class Attempt implements Command {
  constructor(
    readonly target: Target,
    readonly method: PaymentM["method"]
  ) {}
  check = () => true
  async run(model: Model, real: Real) {
    const { reference, scope } = resolveIntent(model, this.target)
    await attemptOn(model, real, scope, reference, this.method)
  }
  toString = () => `Attempt(${showTarget("intent", this.target)}, ${this.method})`
}

/** C1 then C4 on the new intent with the same key: a payment early in a run, for the later commands. */
class Purchase implements Command {
  constructor(
    readonly intent: CreateIntent,
    readonly method: PaymentM["method"]
  ) {}
  check = () => true
  async run(model: Model, real: Real) {
    await this.intent.run(model, real)
    await attemptOn(model, real, this.intent.scope, this.intent.reference, this.method)
  }
  toString = () => `Purchase(${this.intent.toString()}, ${this.method})`
}

/** The cardholder on Cobro's challenge (or bank) page: GET it, then POST a decision. */
class Challenge implements Command {
  constructor(
    readonly pick: number,
    readonly decision: "approve" | "decline"
  ) {}
  check = (model: Readonly<Model>) => model.payments.some((p) => p.challenge !== undefined)
  async run(model: Model, real: Real) {
    const payment = pickFrom(
      model.payments.filter((p) => p.challenge !== undefined),
      Math.max(0, this.pick)
    )!
    const challenge = payment.challenge!
    const page = await real.send("GET", challenge.path)
    expectStatus(page, 200)
    const reply = await real.send("POST", challenge.path, {
      body: `decision=${this.decision}`,
      headers: { "content-type": "application/x-www-form-urlencoded" }
    })
    if (challenge.decision !== undefined && challenge.decision !== this.decision) {
      return expectStatus(reply, 409)
    }
    const intent = findIntent(model, payment.scope, payment.reference)!
    // O6: to the intent's callback_url (303), or a result page when it has none.
    if (intent.callback) {
      expectStatus(reply, 303)
      expect(reply.headers.location).toBe("https://shop.example/back")
    } else {
      expectStatus(reply, 200)
    }
    if (challenge.decision !== undefined) return // a reloaded decision changes nothing
    challenge.decision = this.decision
    if (this.decision === "approve") {
      payment.status = "APPROVED"
      payment.approvedAt = model.now
      intent.status = "PAID"
    } else {
      payment.status = "REJECTED"
      intent.status = "ACTIVE"
    }
  }
  toString = () => `Challenge(challenge#${this.pick}, ${this.decision})`
}

class ReadPayment implements Command {
  constructor(readonly target: Target) {}
  check = () => true
  async run(model: Model, real: Real) {
    const { intent, reference, scope } = resolveIntent(model, this.target)
    const payment = model.payments.find((p) => p.transaction === intent?.transaction)
    const before = await real.logSize()
    const reply = await real.send("GET", `/v1/payment/${reference}`, { key: real.keys[scope] })
    if (intent === undefined || payment === undefined) {
      return expectNotFound(real, before, reply, "PaymentNotFound")
    }
    sync(model, payment)
    expectStatus(reply, 200)
    expect(reply.json).toMatchObject({
      transaction_id: payment.transaction,
      reference_id: reference,
      status: payment.status,
      amount: { currency: "COP", total_amount: payment.total },
      payment_method: payment.method
    })
  }
  toString = () => `ReadPayment(${showTarget("intent", this.target)})`
}

// ---------------------------------------------------------------------------------------------
// Commands: void, refund, refund status, review (C7–C9)
// ---------------------------------------------------------------------------------------------

class Void implements Command {
  constructor(readonly target: Target) {}
  check = () => true
  async run(model: Model, real: Real) {
    const { item: payment, scope } = resolvePayment(model, this.target)
    const before = await real.logSize()
    const reply = await real.send("POST", "/v1/payment/void", {
      key: real.keys[scope],
      body: { transaction_id: payment?.transaction ?? "TRX_404" }
    })
    if (payment === undefined || payment.scope !== scope) {
      return expectNotFound(real, before, reply, "PaymentNotFound")
    }
    sync(model, payment)
    const allowed =
      payment.method === "CREDIT_CARD" &&
      payment.status === "APPROVED" &&
      (payment.refund === undefined || payment.refund.status === "REJECTED") &&
      voidable(payment.approvedAt!, model.now)
    if (!allowed) return expectError(reply, 409, "PaymentCannotBeVoided")
    expectStatus(reply, 204)
    expect(reply.text).toBe("")
    payment.status = "VOIDED"
  }
  toString = () => `Void(${showTarget("payment", this.target)})`
}

class RequestRefund implements Command {
  constructor(
    readonly target: Target,
    readonly otherReference: boolean
  ) {}
  check = () => true
  async run(model: Model, real: Real) {
    const { item: payment, scope } = resolvePayment(model, this.target)
    const reference =
      payment === undefined ? "order-1" : this.otherReference ? `${payment.reference}-x` : payment.reference
    const before = await real.logSize()
    const reply = await real.send("POST", "/v1/payment/refund", {
      key: real.keys[scope],
      body: { reference_id: reference, transaction_id: payment?.transaction ?? "TRX_404", reason: "returned" }
    })
    if (payment === undefined || payment.scope !== scope) {
      return expectNotFound(real, before, reply, "PaymentNotFound")
    }
    // O8: the transaction must be the payment of reference_id (a due sandbox review may be recorded).
    sync(model, payment)
    if (reference !== payment.reference) return expectError(reply, 404, "PaymentNotFound")
    const allowed =
      payment.method === "CREDIT_CARD" &&
      payment.status === "APPROVED" &&
      (payment.refund === undefined || payment.refund.status === "REJECTED")
    if (!allowed) return expectError(reply, 409, "RefundCannotBeRequested")
    expectStatus(reply, 204)
    payment.refund = { status: "PROCESSING", requestedAt: model.now, dateApplied: undefined }
  }
  toString = () =>
    `RequestRefund(${showTarget("payment", this.target)}${this.otherReference ? ", other reference" : ""})`
}

class RefundStatus implements Command {
  constructor(readonly target: Target) {}
  check = () => true
  async run(model: Model, real: Real) {
    const { item: payment, scope } = resolvePayment(model, this.target, (p) => p.refund !== undefined)
    const before = await real.logSize()
    const reply = await real.send("GET", `/v1/payment/refund/${payment?.transaction ?? "TRX_404"}`, {
      key: real.keys[scope]
    })
    if (payment === undefined || payment.scope !== scope) {
      return expectNotFound(real, before, reply, "PaymentNotFound")
    }
    sync(model, payment)
    if (payment.refund === undefined) return expectError(reply, 404, "PaymentNotFound")
    expectStatus(reply, 200)
    expect(reply.json).toEqual({
      payload: {
        transaction_id: payment.transaction,
        status: payment.refund.status,
        date_applied: payment.refund.dateApplied === undefined ? null : bogotaIso(payment.refund.dateApplied)
      },
      errors: []
    })
  }
  toString = () => `RefundStatus(${showTarget("payment", this.target)})`
}

/** O7: the operator's review of a payment's latest refund (admin token, any merchant and mode). */
class ReviewRefund implements Command {
  constructor(
    readonly pick: number,
    readonly outcome: "APPROVED" | "REJECTED"
  ) {}
  check = () => true
  async run(model: Model, real: Real) {
    const refunded = model.payments.filter((p) => p.refund !== undefined)
    const payment = pickFrom(refunded.length > 0 ? refunded : model.payments, this.pick)
    const reply = await real.send("POST", `/admin/v1/refunds/${payment?.transaction ?? "TRX_404"}/review`, {
      admin: true,
      body: { outcome: this.outcome }
    })
    if (payment === undefined) return expectStatus(reply, 404)
    sync(model, payment)
    const refund = payment.refund
    if (refund === undefined) return expectStatus(reply, 404)
    if (refund.status !== "PROCESSING" && refund.status !== this.outcome) return expectStatus(reply, 409)
    if (refund.status === "PROCESSING") {
      refund.status = this.outcome
      refund.dateApplied = model.now
      if (this.outcome === "APPROVED") payment.status = "REFUNDED"
    }
    expectStatus(reply, 200)
    expect(reply.json).toMatchObject({
      transaction_id: payment.transaction,
      status: refund.status,
      date_applied: bogotaIso(refund.dateApplied!)
    })
  }
  toString = () =>
    `ReviewRefund(${this.pick < 0 ? "unknown payment" : `refunded payment#${this.pick}`}, ${this.outcome})`
}

class AdvanceClock implements Command {
  constructor(readonly seconds: number) {}
  check = () => true
  async run(model: Model, real: Real) {
    const reply = await real.send("POST", "/admin/v1/clock/advance", {
      admin: true,
      body: { seconds: this.seconds }
    })
    expectStatus(reply, 200)
    model.now += this.seconds * 1000
    expect(reply.json).toEqual({ now: new Date(model.now).toISOString() })
  }
  toString = () => `AdvanceClock(${this.seconds}s)`
}

// ---------------------------------------------------------------------------------------------
// Generators
// ---------------------------------------------------------------------------------------------

/** Mostly merchant A's sandbox, so that commands meet the entities of earlier ones. */
const scope = fc.constantFrom<ScopeName>("A.test", "A.test", "A.test", "A.live", "B.test")
/** An index into the model's list, or -1 for an id that does not exist. */
const pick = fc.oneof({ weight: 1, arbitrary: fc.constant(-1) }, { weight: 8, arbitrary: fc.nat(40) })
const reference = fc.constantFrom("order-1", "order-2")
/** Mostly the entity's own key; one time in four another scope's (isolation). */
const target = fc.record({
  pick,
  approved: fc.boolean(),
  as: fc.oneof(
    { weight: 3, arbitrary: fc.constant(undefined) },
    { weight: 1, arbitrary: fc.constantFrom<ScopeName>(...SCOPES) }
  )
})
const intentTotal = fc.constantFrom(555001, 555002, 555020, 555040, 555042, 1_000, 250_000)
const linkTotal = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: LINK_MIN, max: LINK_MAX }) },
  { weight: 1, arbitrary: fc.constantFrom(LINK_MIN - 1, LINK_MAX + 1) }
)

/** `n` copies of an arbitrary: its weight among the commands. */
const times = <A>(n: number, arbitrary: fc.Arbitrary<A>): Array<fc.Arbitrary<A>> => Array(n).fill(arbitrary)

const commands = fc.commands(
  [
    fc
      .tuple(
        scope,
        fc.constantFrom("OPEN" as const, "CLOSE" as const),
        linkTotal,
        fc.option(fc.constantFrom(30, 600, 7_200), { nil: undefined }),
        fc.boolean()
      )
      .map(
        ([s, type, total, expires, withReference]) => new CreateLink(s, type, total, expires, withReference)
      ),
    target.map((t) => new ReadLink(t)),
    ...times(
      3,
      fc
        .tuple(scope, reference, intentTotal, fc.boolean())
        .map(([s, r, total, callback]) => new CreateIntent(s, r, total, callback))
    ),
    ...times(
      3,
      fc
        .tuple(
          scope,
          fc.constantFrom("order-1", "order-2", "order-3", "order-4"),
          intentTotal,
          fc.boolean(),
          fc.constantFrom("CREDIT_CARD" as const, "CREDIT_CARD" as const, "PSE" as const)
        )
        .map(
          ([s, r, total, callback, method]) => new Purchase(new CreateIntent(s, r, total, callback), method)
        )
    ),
    target.map((t) => new ReadIntent(t)),
    fc
      .tuple(target, intentTotal, fc.boolean())
      .map(([t, total, callback]) => new UpdateIntent(t, total, callback)),
    ...times(
      3,
      fc
        .tuple(target, fc.constantFrom("CREDIT_CARD" as const, "CREDIT_CARD" as const, "PSE" as const))
        .map(([t, method]) => new Attempt(t, method))
    ),
    ...times(
      2,
      fc
        .tuple(fc.nat(10), fc.constantFrom("approve" as const, "decline" as const))
        .map(([p, d]) => new Challenge(p, d))
    ),
    target.map((t) => new ReadPayment(t)),
    ...times(
      2,
      target.map((t) => new Void(t))
    ),
    ...times(
      2,
      fc
        .tuple(target, fc.oneof({ weight: 4, arbitrary: fc.constant(false) }, fc.constant(true)))
        .map(([t, other]) => new RequestRefund(t, other))
    ),
    target.map((t) => new RefundStatus(t)),
    fc
      .tuple(pick, fc.constantFrom("APPROVED" as const, "REJECTED" as const))
      .map(([p, o]) => new ReviewRefund(p, o)),
    fc.constantFrom(1, 59, 61, 1_800, 3 * 3_600, 39_599, 12 * 3_600).map((s) => new AdvanceClock(s))
  ],
  { maxCommands: 30, size: "max" }
)

// ---------------------------------------------------------------------------------------------
// The property
// ---------------------------------------------------------------------------------------------

/** One fresh app per run: two merchants offering CREDIT_CARD links, and the keys of the three scopes. */
const runOnFreshApp = async (run: (real: Real) => Promise<void>) => {
  const runtime = ManagedRuntime.make(TestApp.layer() as Layer.Layer<any>)
  try {
    const exec = <A>(effect: Effect.Effect<A, any, any>): Promise<A> => runtime.runPromise(effect)
    const merchant = (name: string) =>
      exec(
        Effect.gen(function* () {
          const m = yield* TestApp.createMerchant(name)
          const methods = yield* TestApp.admin("PUT", `/admin/v1/merchants/${m.merchantId}/payment-methods`, {
            link: { CREDIT_CARD: { min: LINK_MIN, max: LINK_MAX } }
          })
          if (methods.status !== 200) return yield* Effect.dieMessage(methods.text)
          return m
        })
      )
    const a = await merchant("A")
    const b = await merchant("B")
    await run({
      keys: { "A.test": a.button.test, "A.live": a.button.production, "B.test": b.button.test },
      send: (method, path, options) => exec(TestApp.send(method, path, options)),
      logSize: () => exec(TestApp.logSize)
    })
  } finally {
    await runtime.dispose()
  }
}

describe("the link and online APIs against a model", () => {
  // Found by the model (shrunk): the challenge page's reload after the intent or the payment moved on.
  it.live(
    "O6: a reloaded decision changes nothing and redirects again, after a new attempt on the intent or a void",
    () =>
      Effect.gen(function* () {
        const m = yield* TestApp.createMerchant()
        const key = m.button.test
        const decide = (path: string, decision: string) =>
          TestApp.send("POST", path, {
            body: `decision=${decision}`,
            headers: { "content-type": "application/x-www-form-urlencoded" }
          })
        const pathOf = (reply: TestApp.Reply) =>
          new URL((reply.json.next_actions ?? reply.json.payload.next_actions).redirect_url).pathname
        // A declined bank redirect, then a new (approved) attempt on the same intent, then the reload.
        yield* Calls.createIntent(key, intentBody("order-1", 555001, true))
        const pse = yield* Calls.attempt(key, attemptBody("order-1", "PSE"))
        expect((yield* decide(pathOf(pse), "decline")).status).toBe(303)
        const card = yield* Calls.attempt(key, attemptBody("order-1", "CREDIT_CARD"))
        const reloaded = yield* decide(pathOf(pse), "decline")
        expect(reloaded.status, reloaded.text).toBe(303)
        const intent = yield* Calls.readIntent(key, "order-1")
        expect(intent.json).toMatchObject({
          status: "PAID",
          service_transaction_id: card.json.transaction_id
        })
        // An approved 3DS challenge, voided, then the reload of the approval.
        yield* Calls.createIntent(key, intentBody("order-2", 555020, true))
        const challenged = yield* Calls.attempt(key, attemptBody("order-2", "CREDIT_CARD"))
        expect((yield* decide(pathOf(challenged), "approve")).status).toBe(303)
        const voided = yield* TestApp.send("POST", "/v1/payment/void", {
          key,
          body: { transaction_id: challenged.json.payload.transaction_id }
        })
        expect(voided.status).toBe(204)
        const again = yield* decide(pathOf(challenged), "approve")
        expect(again.status, again.text).toBe(303)
        expect((yield* decide(pathOf(challenged), "decline")).status).toBe(409)
        expect((yield* Calls.readPayment(key, "order-2")).json.status).toBe("VOIDED")
      }).pipe(Effect.provide(TestApp.layer())) as Effect.Effect<void>
  )

  it.live(
    "model: links, intents, attempts, challenges, payments, voids, refunds and reviews answer as the model predicts, and no scope sees another's ids",
    () =>
      Effect.promise(() =>
        fc.assert(
          fc.asyncProperty(commands, (cmds) =>
            runOnFreshApp((real) =>
              fc.asyncModelRun(
                () => ({ model: { now: TestClock.START, links: [], intents: [], payments: [] }, real }),
                cmds
              )
            )
          ),
          { numRuns: 50 }
        )
      ),
    { timeout: 180_000 }
  )
})
