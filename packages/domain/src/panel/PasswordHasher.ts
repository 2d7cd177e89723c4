/**
 * The password hashing port of the merchant panel (issue 22: "passwords hashed with a memory-hard
 * function"). The domain never sees how: the server's adapter is scrypt from `node:crypto`
 * (`@cobro/panel/PasswordHashing`). A password passes through here and nowhere else; only its
 * hash is stored.
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"

/**
 * The hasher.
 *
 * @category services
 */
export class PasswordHasher extends Context.Tag("@cobro/domain/PasswordHasher")<
  PasswordHasher,
  {
    /** A new hash of `password`, salted: two hashes of one password differ. */
    readonly hash: (password: string) => Effect.Effect<string>
    /** Whether `password` is the one `stored` was made from; false for a stored text it cannot read. */
    readonly verify: (password: string, stored: string) => Effect.Effect<boolean>
    /**
     * A stored hash of no one's password, in this hasher's format and cost: verified against for an
     * unknown email, so that an unknown email costs the same work as a wrong password.
     */
    readonly dummy: string
  }
>() {}
