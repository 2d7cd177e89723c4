/**
 * ISO-8601 instants as `--at`, `--since` and `--until` take them: a date and a time with a zone
 * (`Z` or an offset), seconds and a fraction optional. A time without a zone is refused: it would
 * mean a different instant on every machine.
 */
import * as Either from "effect/Either"

const pattern =
  /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?([Zz]|[+-]\d{2}(?::?\d{2})?)$/

const daysIn = (year: number, month: number) => new Date(Date.UTC(year, month, 0)).getUTCDate()

/** Parses an instant; the fraction is kept to the millisecond (truncated, as the log records). */
export const parse = (text: string): Either.Either<Date, string> => {
  const trimmed = text.trim()
  const m = pattern.exec(trimmed)
  const refuse = (why: string) =>
    Either.left(
      `'${text}' is not an ISO-8601 instant (${why}); write e.g. 2026-01-31T14:30:00Z or 2026-01-31T09:30:00-05:00`
    )
  if (m === null) {
    return /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(:\d{2}([.,]\d+)?)?$/.test(trimmed)
      ? refuse("no time zone: add Z or an offset such as -05:00")
      : refuse("expected YYYY-MM-DDTHH:MM[:SS[.fff]] and a zone")
  }
  const [year, month, day, hour, minute] = [m[1], m[2], m[3], m[4], m[5]].map(Number) as [
    number,
    number,
    number,
    number,
    number
  ]
  const second = m[6] === undefined ? 0 : Number(m[6])
  const millis = m[7] === undefined ? 0 : Number(m[7].padEnd(3, "0").slice(0, 3))
  if (month < 1 || month > 12) return refuse(`month ${m[2]}`)
  if (day < 1 || day > daysIn(year, month)) return refuse(`day ${m[3]} of month ${m[2]}`)
  if (hour > 23 || minute > 59 || second > 59) return refuse("time out of range")
  const zone = m[8]!
  let offsetMinutes = 0
  if (zone !== "Z" && zone !== "z") {
    const sign = zone.startsWith("-") ? -1 : 1
    const digits = zone.slice(1).replace(":", "")
    const hours = Number(digits.slice(0, 2))
    const minutes = digits.length > 2 ? Number(digits.slice(2)) : 0
    if (hours > 23 || minutes > 59) return refuse(`offset ${zone}`)
    offsetMinutes = sign * (hours * 60 + minutes)
  }
  const utc = Date.UTC(year, month - 1, day, hour, minute, second, millis) - offsetMinutes * 60_000
  return Either.right(new Date(utc))
}
