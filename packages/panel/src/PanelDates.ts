/**
 * The panel's days (issue 22, "Payments"; issue 31, item 6): a day as `<input type="date">` sends it,
 * in Bogotá's calendar, the merchants' own. The payments' day filters and the link form's expiry read
 * days here.
 */
import * as Bogota from "@cobro/domain/Bogota"

/** A day as `<input type="date">` sends it, as the instant Bogotá's day starts; undefined if not a day. */
export const startOfDay = (text: string, plusDays = 0): Date | undefined => {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text)
  if (match === null) return undefined
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])]
  // Not `Date.UTC`: it reads the years 0 to 99 as 1900 to 1999.
  const check = new Date(0)
  check.setUTCFullYear(year, month - 1, day)
  if (check.getUTCFullYear() !== year || check.getUTCMonth() !== month - 1 || check.getUTCDate() !== day) {
    return undefined
  }
  return new Date(check.getTime() + plusDays * 86_400_000 - Bogota.OFFSET_MS)
}
