/**
 * The requests of `npm run bench -- http` (A3, B2, B3), built by request number and connection: pure,
 * so that the load generator's process builds them and the servers' process only serves them.
 */

export type EndpointName = "A3" | "B2" | "B3"

/** What a target gives its load: the merchant's keys and the links B3 reads (made by B2). */
export interface Keys {
  readonly terminalKey: string
  readonly buttonKey: string
  /** Links created for B3, read round robin. */
  readonly links: ReadonlyArray<string>
}

/** A target under load: its base URL, keys, links to read, and how it stops. */
export interface Target extends Keys {
  readonly name: string
  readonly url: string
  readonly links: Array<string>
  close(): Promise<void>
}

export interface Request {
  readonly method: "GET" | "POST"
  readonly path: string
  readonly key: string
  readonly body?: string | undefined
}

/** One terminal per connection: a terminal takes one sale at a time, as a shop's till does. */
export const serial = (worker: number) => `SN-BENCH-${worker}`

export const checkoutBody = (i: number, worker: number) =>
  JSON.stringify({
    amount: {
      currency: "COP",
      total_amount: 11900,
      taxes: [{ type: "VAT", base: 10000, value: 1900 }],
      tip_amount: 0
    },
    user_email: "seller@shop.co",
    payment_method: "POS",
    terminal_model: "SMART_PRO",
    terminal_serial: serial(worker),
    reference: `order-${i}`
  })

export const linkBody = (i: number) =>
  JSON.stringify({
    amount_type: "CLOSE",
    amount: { total_amount: 50_000 },
    reference: `bench-${i}`,
    description: "a bench link"
  })

/** Request `i` of an endpoint, sent on connection (A3: by terminal) `worker`. */
export const request = (endpoint: EndpointName, keys: Keys, i: number, worker: number): Request => {
  switch (endpoint) {
    case "A3":
      return {
        method: "POST",
        path: "/payments/app-checkout",
        key: keys.terminalKey,
        body: checkoutBody(i, worker)
      }
    case "B2":
      return { method: "POST", path: "/online/link/v1", key: keys.buttonKey, body: linkBody(i) }
    case "B3":
      return {
        method: "GET",
        path: `/online/link/v1/${keys.links[i % keys.links.length]}`,
        key: keys.buttonKey
      }
  }
}
