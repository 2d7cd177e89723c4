/**
 * Timings of the requests a test receiver serves (issue 5, several dispatchers): when each request
 * arrived and when its response closed, which process sent it (the test-only header of
 * `DispatcherMain`) and its exact body, to check that no two attempts of a notification overlap.
 */
import * as Nanos from "@cobro/domain/Nanos"
import * as Either from "effect/Either"
import type * as Http from "node:http"
import { performance } from "node:perf_hooks"

/** The test-only header naming the dispatcher process that sent a request (set by `DispatcherMain`). */
export const DISPATCHER_HEADER = "x-cobro-test-dispatcher"

/** One request as the receiver saw it. */
export interface Timed {
  /** `performance.now()` when the request's headers arrived. */
  readonly opened: number
  /** `performance.now()` when its response closed (sent, or the connection cut); undefined while open. */
  closed: number | undefined
  /** The process that sent it. */
  readonly dispatcher: string
  readonly path: string
  readonly headers: Http.IncomingHttpHeaders
  body: Buffer
}

/** Records every request `server` serves, beside its own handler. */
export const record = (server: Http.Server): ReadonlyArray<Timed> => {
  const log: Array<Timed> = []
  server.on("request", (req: Http.IncomingMessage, res: Http.ServerResponse) => {
    const entry: Timed = {
      opened: performance.now(),
      closed: undefined,
      dispatcher: String(req.headers[DISPATCHER_HEADER] ?? ""),
      path: req.url ?? "",
      headers: req.headers,
      body: Buffer.alloc(0)
    }
    log.push(entry)
    const chunks: Array<Buffer> = []
    req.on("data", (chunk: Buffer) => chunks.push(chunk))
    req.on("end", () => (entry.body = Buffer.concat(chunks)))
    res.on("close", () => (entry.closed = performance.now()))
  })
  return log
}

/** The notification a body carries: its `id`, `subject` and `data.payment_id` (the time read exactly). */
export const notificationOf = (body: Buffer): { id: string; subject: string; paymentId: string } => {
  const parsed = Either.getOrThrow(Nanos.parseJsonExact(body.toString("utf8"))) as {
    id: string
    subject: string
    data: { payment_id: string }
  }
  return { id: parsed.id, subject: parsed.subject, paymentId: parsed.data.payment_id }
}

/** Requests grouped by notification id (complete bodies only). */
export const byNotification = (log: ReadonlyArray<Timed>): Map<string, Array<Timed>> => {
  const groups = new Map<string, Array<Timed>>()
  for (const entry of log) {
    if (entry.body.length === 0) continue
    const { id } = notificationOf(entry.body)
    groups.set(id, [...(groups.get(id) ?? []), entry])
  }
  return groups
}

/** The pairs of requests of one notification that were open at the same time. */
export const overlaps = (log: ReadonlyArray<Timed>): Array<[Timed, Timed]> => {
  const found: Array<[Timed, Timed]> = []
  for (const entries of byNotification(log).values()) {
    const sorted = [...entries].sort((a, b) => a.opened - b.opened)
    // The request still open the longest among those opened before: the next must open after it closed.
    let latest: Timed | undefined
    for (const entry of sorted) {
      if (latest !== undefined && (latest.closed === undefined || entry.opened < latest.closed)) {
        found.push([latest, entry])
      }
      if (
        latest === undefined ||
        (latest.closed !== undefined && (entry.closed ?? Infinity) > latest.closed)
      ) {
        latest = entry
      }
    }
  }
  return found
}

/** A readable line for an overlap: the notification, each request's sender and open interval (ms). */
export const describeOverlap = ([a, b]: [Timed, Timed]): string => {
  const span = (t: Timed) => `${t.dispatcher} ${t.opened.toFixed(1)}–${t.closed?.toFixed(1) ?? "open"}`
  return `${notificationOf(a.body).id}: ${span(a)} overlaps ${span(b)}`
}
