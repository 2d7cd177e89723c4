/**
 * The languages Cobro speaks to people on its pages (the hosted checkout and 3DS pages, the merchant
 * panel): Spanish and English, the choice of one by the browser's `Accept-Language`, and amounts
 * written as their currency is (COP without decimals). Pure text: no I/O.
 */

/** The pages' languages. */
export type Locale = "es" | "en"

/** The language when the browser names neither: Cobro's payers are in Colombia. */
export const DEFAULT_LOCALE: Locale = "es"

const isLocale = (tag: string): tag is Locale => tag === "es" || tag === "en"

/**
 * The page's language: `lang` (the page's own switch, carried by its forms) when it is `es` or `en`,
 * else the first of the browser's `Accept-Language` ranges (by quality, then order) that is Spanish or
 * English, else {@link DEFAULT_LOCALE}. A header that cannot be parsed counts as absent.
 */
export const negotiate = (acceptLanguage: string | undefined, override?: string | undefined): Locale => {
  if (override !== undefined && isLocale(override)) return override
  if (acceptLanguage === undefined) return DEFAULT_LOCALE
  const ranges = acceptLanguage
    .split(",")
    .slice(0, 32)
    .map((part, index) => {
      const [range = "", ...params] = part.trim().split(";")
      const q = params.map((p) => /^\s*q\s*=\s*([0-9.]+)\s*$/.exec(p)).find((m) => m !== null)
      const quality = q ? Number(q[1]) : 1
      return {
        tag: range.trim().toLowerCase().split("-")[0] ?? "",
        quality: Number.isFinite(quality) ? quality : 0,
        index
      }
    })
    .filter((r) => r.quality > 0)
    .sort((a, b) => b.quality - a.quality || a.index - b.index)
  return ranges.map((r) => r.tag).find(isLocale) ?? DEFAULT_LOCALE
}

/** The decimals an amount is shown with: none for COP (as Colombians write pesos), two otherwise. */
export const fractionDigits = (currency: string): number => (currency === "COP" ? 0 : 2)

const formats = new Map<string, Intl.NumberFormat>()

/** An amount as its currency is written in the page's language: `$ 50.000` (es-CO), `COP 50,000` (en-US). */
export const formatMoney = (amount: number, currency: string, locale: Locale): string => {
  const key = `${locale}:${currency}`
  let format = formats.get(key)
  if (format === undefined) {
    const digits = fractionDigits(currency)
    format = new Intl.NumberFormat(locale === "es" ? "es-CO" : "en-US", {
      style: "currency",
      currency,
      minimumFractionDigits: digits,
      maximumFractionDigits: digits
    })
    formats.set(key, format)
  }
  // Intl separates the symbol with a no-break space; a plain one reads the same and copies better.
  return format.format(amount).replace(/\u00a0/g, " ")
}

/** Every sentence the page shows, in both languages. */
