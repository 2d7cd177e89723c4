/**
 * Text Cobro can store and show: no NUL character and no unpaired UTF-16 surrogate.
 * PostgreSQL refuses both in `text` and `jsonb`, and neither is valid UTF-8, so every string
 * a request carries is held to this rule at the wire, before anything is recorded.
 */
import * as Schema from "effect/Schema"

// With the `u` flag a paired surrogate is one code point: `\p{Cs}` matches only unpaired ones.
const UNSAFE = /\u0000|\p{Cs}/u

/** Whether a string holds no NUL and no unpaired surrogate. */
export const isSafe = (s: string): boolean => !UNSAFE.test(s)

/** The message of a string that breaks the rule. */
export const UNSAFE_MESSAGE = "must not contain NUL characters or unpaired UTF-16 surrogates"

/** Refines a string schema (branded or not) with the rule. */
export const refine = <S extends Schema.Schema<any, string, any>>(schema: S) =>
  schema.pipe(Schema.filter((s: string) => isSafe(s) || UNSAFE_MESSAGE))

/**
 * Any string without NUL or unpaired surrogates.
 *
 * @category schemas
 */
export const SafeString = refine(Schema.String).annotations({ identifier: "SafeString" })
export type SafeString = typeof SafeString.Type

/**
 * A non-empty string without NUL or unpaired surrogates.
 *
 * @category schemas
 */
export const NonEmptySafeString = refine(Schema.NonEmptyString).annotations({
  identifier: "NonEmptySafeString"
})

/** Whether a string holds a control character (C0, DEL or C1), which no identifier or URL needs. */
export const hasControl = (s: string): boolean => /[\u0000-\u001f\u007f-\u009f]/.test(s)

/**
 * The path of the first string in a JSON value (a member name or a value) that breaks the rule, as
 * the members and indexes leading to it; none when every string is safe.
 */
export const firstUnsafe = (value: unknown): ReadonlyArray<string | number> | undefined => {
  if (typeof value === "string") return isSafe(value) ? undefined : []
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const inner = firstUnsafe(value[i])
      if (inner !== undefined) return [i, ...inner]
    }
    return undefined
  }
  if (typeof value === "object" && value !== null) {
    for (const [key, member] of Object.entries(value)) {
      if (!isSafe(key)) return [key]
      const inner = firstUnsafe(member)
      if (inner !== undefined) return [key, ...inner]
    }
  }
  return undefined
}
