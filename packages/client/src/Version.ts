/**
 * The client's version and the `User-Agent` it sends (`cobro-client/<version>`), so that the
 * service's logs tell which client version called.
 */

/**
 * The version of `@cobro/client` (its package.json's, checked by a test).
 *
 * @category constants
 */
export const VERSION = "0.0.0"

/**
 * The `User-Agent` header every request carries.
 *
 * @category constants
 */
export const USER_AGENT = `cobro-client/${VERSION}`
