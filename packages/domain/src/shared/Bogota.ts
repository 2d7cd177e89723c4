/**
 * Bogotá time (UTC−05:00, no daylight saving since 1993): it decides the void window, "the day of
 * the transaction before 21:00" (spec, void and refund preconditions).
 */
import * as DateTime from "effect/DateTime"

/** Bogotá's fixed offset from UTC, in milliseconds. */
export const OFFSET_MS = -5 * 60 * 60 * 1000

/** The hour (Bogotá) from which a transaction of the same day can no longer be voided. */
export const VOID_CUTOFF_HOUR = 21

const DAY_MS = 24 * 60 * 60 * 1000

const localMillis = (instant: DateTime.DateTime): number => DateTime.toEpochMillis(instant) + OFFSET_MS

/** The Bogotá calendar day of an instant, as a day number since 1970-01-01 (Bogotá). */
export const calendarDay = (instant: DateTime.DateTime): number => Math.floor(localMillis(instant) / DAY_MS)

/** Milliseconds since Bogotá midnight of the instant's day. */
export const timeOfDay = (instant: DateTime.DateTime): number => {
  const ms = localMillis(instant) % DAY_MS
  return ms < 0 ? ms + DAY_MS : ms
}

/** The instant at which the void window of a transaction made at `at` closes: 21:00 Bogotá that day. */
export const voidWindowClosesAt = (at: DateTime.DateTime): DateTime.Utc =>
  DateTime.unsafeMake(calendarDay(at) * DAY_MS + VOID_CUTOFF_HOUR * 60 * 60 * 1000 - OFFSET_MS)

/**
 * Whether a transaction made at `approvedAt` can still be voided at `now`: the same Bogotá calendar
 * day, strictly before 21:00. A transaction approved at or after 21:00 is never voidable.
 */
export const isWithinVoidWindow = (approvedAt: DateTime.DateTime, now: DateTime.DateTime): boolean =>
  DateTime.toEpochMillis(now) >= DateTime.toEpochMillis(approvedAt) &&
  DateTime.toEpochMillis(now) < DateTime.toEpochMillis(voidWindowClosesAt(approvedAt))

/** ISO 8601 with the Bogotá offset, as notifications carry `created_at`: `2026-11-21T09:30:00.000-05:00`. */
export const formatIso = (instant: DateTime.DateTime): string => {
  const local = new Date(localMillis(instant)).toISOString()
  return `${local.slice(0, -1)}-05:00`
}
