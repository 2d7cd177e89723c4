/**
 * Steady write load on a server through a failover, every answer recorded: clients that retry a
 * failed request (network error, 5xx, 409 `IdempotencyKeyInUse`) with the same `Idempotency-Key`
 * and backoff until a 2xx or a definite 4xx, and a poller of `GET /ready`.
 */
import { randomUUID } from "node:crypto"
import * as ServerProcess from "../support/ServerProcess.js"

/** One HTTP exchange of a client. */
export interface Exchange {
  readonly kind: "A3" | "B2" | "C1" | "C4"
  readonly key: string
  /** The resource's reference (A3's `reference`, C's `reference_id`, B2's link `reference`). */
  readonly reference: string
  readonly attempt: number
  readonly start: number
  readonly end: number
  /** 0 for a network error or a timeout. */
  readonly status: number
  readonly contentType: string | null
  readonly retryAfter: string | null
  readonly body: string
  readonly error?: string
}

/** How a key's requests ended. */
export interface KeyOutcome {
  readonly kind: Exchange["kind"]
  readonly key: string
  readonly reference: string
  readonly exchanges: ReadonlyArray<Exchange>
  /** The last answer (a 2xx or a definite 4xx), undefined when the load stopped before one. */
  readonly final: Exchange | undefined
}

/** A `/ready` answer that differs from the one before. */
export interface ReadyTransition {
  /** When its request was sent. */
  readonly sent: number
  /** When it was answered (or timed out). */
  readonly at: number
  readonly status: number
  readonly body: string
}

export interface Recorder {
  readonly exchanges: Array<Exchange>
  readonly outcomes: Array<KeyOutcome>
  readonly ready: Array<ReadyTransition>
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

const requestTimeoutMillis = 15_000

const send = async (
  server: ServerProcess.RunningServer,
  kind: Exchange["kind"],
  apiKey: string,
  path: string,
  body: unknown,
  key: string,
  reference: string,
  attempt: number
): Promise<Exchange> => {
  const start = Date.now()
  try {
    const response = await fetch(server.url + path, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        authorization: `x-api-key ${apiKey}`,
        "idempotency-key": key
      },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(requestTimeoutMillis)
    })
    const text = await response.text()
    return {
      kind,
      key,
      reference,
      attempt,
      start,
      end: Date.now(),
      status: response.status,
      contentType: response.headers.get("content-type"),
      retryAfter: response.headers.get("retry-after"),
      body: text
    }
  } catch (error) {
    return {
      kind,
      key,
      reference,
      attempt,
      start,
      end: Date.now(),
      status: 0,
      contentType: null,
      retryAfter: null,
      body: "",
      error: `${String(error)}${(error as any)?.cause?.code === undefined ? "" : ` (${(error as any).cause.code})`}`
    }
  }
}

const errorCodes = (exchange: Exchange): ReadonlyArray<string> => {
  try {
    const json = JSON.parse(exchange.body)
    return Array.isArray(json?.errors) ? json.errors.map((e: any) => String(e?.code)) : []
  } catch {
    return []
  }
}

/** A 409 `IdempotencyKeyUnanswered`: the key's request took effect, its answer is lost. */
export const unanswered = (exchange: Exchange) =>
  exchange.status === 409 && errorCodes(exchange).includes("IdempotencyKeyUnanswered")

/** Worth sending again with the same key: no answer, a 5xx, or the key still in use. */
export const retriable = (exchange: Exchange) =>
  exchange.status === 0 ||
  exchange.status >= 500 ||
  (exchange.status === 409 && errorCodes(exchange).includes("IdempotencyKeyInUse"))

/**
 * Sends one write until it is answered for good (2xx or a definite 4xx), with the same key; the
 * backoff grows from 100 ms to 1 s. Gives up 60 s after `running()` turns false, or at once when the
 * server process is gone (`alive()` false).
 */
export const write = async (
  recorder: Recorder,
  server: ServerProcess.RunningServer,
  running: () => boolean,
  request: { kind: Exchange["kind"]; apiKey: string; path: string; body: unknown; reference: string }
): Promise<KeyOutcome> => {
  // False once the server process is gone (when the server says): no retry can succeed then.
  const alive = () => (server as { alive?: () => boolean }).alive?.() ?? true
  const key = randomUUID()
  const exchanges: Array<Exchange> = []
  let stoppedAt: number | undefined
  for (let attempt = 1, backoff = 100; ; attempt++, backoff = Math.min(backoff * 2, 1000)) {
    const exchange = await send(
      server,
      request.kind,
      request.apiKey,
      request.path,
      request.body,
      key,
      request.reference,
      attempt
    )
    exchanges.push(exchange)
    recorder.exchanges.push(exchange)
    if (!retriable(exchange)) {
      const outcome = { kind: request.kind, key, reference: request.reference, exchanges, final: exchange }
      recorder.outcomes.push(outcome)
      return outcome
    }
    if (!running()) stoppedAt ??= Date.now()
    if (stoppedAt !== undefined && (Date.now() - stoppedAt > 60_000 || !alive())) {
      const outcome = { kind: request.kind, key, reference: request.reference, exchanges, final: undefined }
      recorder.outcomes.push(outcome)
      return outcome
    }
    await sleep(backoff)
  }
}

/** Polls `GET /ready` every 100 ms while `running()`, keeping each change of status or reasons. */
export const pollReady = async (
  recorder: Recorder,
  server: ServerProcess.RunningServer,
  running: () => boolean
) => {
  let last = ""
  while (running()) {
    const started = Date.now()
    let status = 0
    let body = ""
    try {
      const response = await fetch(server.url + "/ready", { signal: AbortSignal.timeout(1000) })
      status = response.status
      body = await response.text()
    } catch (error) {
      body = String(error)
    }
    if (`${status} ${body}` !== last) {
      recorder.ready.push({ sent: started, at: Date.now(), status, body: body.slice(0, 300) })
      last = `${status} ${body}`
    }
    await sleep(Math.max(0, 100 - (Date.now() - started)))
  }
}

/** A successful answer. */
export const ok = (exchange: Exchange) => exchange.status >= 200 && exchange.status < 300

/** The id an answer gives to its resource (A3 integration_id, B2 payment_link, C1 reference_id, C4 transaction_id). */
export const resourceId = (exchange: Exchange): string | undefined => {
  try {
    const json = JSON.parse(exchange.body)
    switch (exchange.kind) {
      case "A3":
        return json?.payload?.integration_id
      case "B2":
        return json?.payload?.payment_link
      case "C1":
        return json?.reference_id ?? json?.payload?.reference_id
      case "C4":
        return json?.transaction_id ?? json?.payload?.transaction_id
    }
  } catch {
    return undefined
  }
}

/** What is wrong with a non-2xx answer's body and headers (empty when it is as the spec wants). */
export const envelopeProblems = (exchange: Exchange): ReadonlyArray<string> => {
  if (ok(exchange) || exchange.status === 0) return []
  const problems: Array<string> = []
  const where = `${exchange.kind} ${exchange.status} key ${exchange.key} attempt ${exchange.attempt}`
  if (!/^application\/(.+\+)?json\b/.test(exchange.contentType ?? ""))
    problems.push(
      `${where}: content-type ${exchange.contentType} body ${JSON.stringify(exchange.body.slice(0, 200))}`
    )
  let json: any
  try {
    json = JSON.parse(exchange.body)
  } catch {
    problems.push(`${where}: not JSON: ${JSON.stringify(exchange.body.slice(0, 200))}`)
    return problems
  }
  const items = json?.errors
  if (
    !Array.isArray(items) ||
    items.length === 0 ||
    !items.every((i: any) => typeof i?.code === "string" && typeof i?.message === "string")
  )
    problems.push(`${where}: not the error envelope: ${exchange.body.slice(0, 200)}`)
  if (exchange.status >= 500) {
    const codes = errorCodes(exchange)
    // A3: the spec's AP001 (500) with Retry-After, or 503 in the same envelope.
    const a3 = exchange.kind === "A3" && exchange.status === 500 && codes.includes("AP001")
    if (!a3 && exchange.status !== 503)
      problems.push(`${where}: a ${exchange.status}, not 503: ${exchange.body.slice(0, 200)}`)
    if (exchange.retryAfter === null)
      problems.push(`${where}: no Retry-After: ${exchange.body.slice(0, 200)}`)
  }
  return problems
}
