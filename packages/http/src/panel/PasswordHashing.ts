/**
 * The panel's password hashing moved to `@cobro/panel/PasswordHashing` (issue "rooms by purpose"); this
 * path re-exports it for the `cobro` command line's modules that still import it from here.
 */
export * from "@cobro/panel/PasswordHashing"
