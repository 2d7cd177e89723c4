/**
 * `npm run bench -- json`: Cobro's exact JSON (`ExactJson.parse` and
 * `ExactJson.stringify`, integers above 2^53 kept as `bigint`) against the libraries a Node team would
 * reach for, on the wire bodies that need it.
 *
 * First an exactness table: each parser on integers above 2^53, decimals (0.1, 1e21, long ones),
 * duplicate keys, `__proto__` and `constructor` keys, deep nesting and invalid text (which must be an
 * error); each writer on bigints and `JSON.stringify`'s edge cases. `lossless-json` is run as Cobro
 * would use it (a number parser that keeps an integer a number unless it would not write back as
 * sent, and the last of duplicate keys winning, as `JSON.parse`) and as it comes; `json-bigint` with
 * native bigints.
 *
 * Then the speed of the exact ones, in ops/s (median of the rounds, the order rotated each round), on
 * two realistic bodies written with the spec's schemas: a webhook notification (a card sale, with
 * its seller) and an A4 fallback response of 10 notifications (card and other methods). `JSON.parse`
 * is shown for reference: it rounds `time`, so it is not a candidate. Both candidates must give the
 * same values and the same bytes, checked before timing.
 *
 * Environment: `BENCH_ROUNDS` (default 7), `BENCH_ROUND_MS` (time per measurement, default 300).
 */
import * as ExactJson from "@cobro/domain/ExactJson"
import * as Notification from "@cobro/domain/NotificationApi"
import * as TerminalApi from "@cobro/domain/TerminalApi"
import * as Schema from "effect/Schema"
import JSONbig from "json-bigint"
import * as LosslessJson from "lossless-json"
import { performance } from "node:perf_hooks"
import { isDeepStrictEqual } from "node:util"
import * as Settings from "../../../bench/Settings.js"

const rounds = Settings.number("BENCH_ROUNDS", 7)
const roundMs = Settings.number("BENCH_ROUND_MS", 300)

// ---------------------------------------------------------------------------------------------
// The candidates
// ---------------------------------------------------------------------------------------------

/** Cobro's number rule: an integer literal that would not write back as sent is a `bigint`. */
const exactNumber = (token: string): number | bigint => {
  const value = Number(token)
  if (Number.isSafeInteger(value) || /[.eE]/.test(token)) return value
  return String(value) === token ? value : BigInt(token)
}
const losslessOptions: LosslessJson.ParseOptions = {
  parseNumber: exactNumber,
  onDuplicateKey: ({ newValue }) => newValue
}
const jsonBigint = JSONbig({ useNativeBigInt: true })

const parsers: ReadonlyArray<readonly [string, (text: string) => unknown]> = [
  [
    "cobro",
    (text) => {
      const parsed = ExactJson.parse(text)
      if (parsed._tag === "Left") throw new SyntaxError(parsed.left.message)
      return parsed.right
    }
  ],
  ["lossless-json", (text) => LosslessJson.parse(text, null, losslessOptions)],
  ["lossless-json (as it comes)", (text) => LosslessJson.parse(text)],
  ["json-bigint", (text) => jsonBigint.parse(text)]
]

const writers: ReadonlyArray<readonly [string, (value: unknown) => string | undefined]> = [
  ["cobro", ExactJson.stringify],
  ["lossless-json", (value) => LosslessJson.stringify(value)],
  ["json-bigint", (value) => jsonBigint.stringify(value)]
]

// ---------------------------------------------------------------------------------------------
// Exactness
// ---------------------------------------------------------------------------------------------

const ERROR = Symbol("an error")
const deep = (depth: number) => "[".repeat(depth) + "]".repeat(depth)
const nested = (depth: number): unknown => (depth === 0 ? [] : [nested(depth - 1)])

/** Texts and what an exact reader gives: `JSON.parse`'s value, but for integers beyond 2^53. */
const parseCases: ReadonlyArray<readonly [string, string, unknown]> = [
  ["integer above 2^53", `{"time":1712345678901234567}`, { time: 1712345678901234567n }],
  ["2^53 + 1, negative", "-9007199254740993", -9007199254740993n],
  ["a 16-digit safe integer stays a number", "1000000000000000", 1000000000000000],
  ["0.1", "0.1", 0.1],
  ["1e21", "1e21", 1e21],
  ["a decimal of 17 digits", "0.12345678901234567", 0.12345678901234567],
  ["a large decimal", "12345678901234567890.5", 12345678901234567890.5],
  ["duplicate keys: the last wins", `{"a":1,"a":2}`, { a: 2 }],
  ["__proto__: an own key", `{"__proto__":{"polluted":1}}`, JSON.parse(`{"__proto__":{"polluted":1}}`)],
  ["constructor: an own key", `{"constructor":{"prototype":{}}}`, { constructor: { prototype: {} } }],
  ["escapes", `"x\\"y\\u00f1\\n"`, 'x"yñ\n'],
  [`${ExactJson.MAX_DEPTH + 1} levels deep`, deep(ExactJson.MAX_DEPTH + 1), nested(ExactJson.MAX_DEPTH)],
  [`${ExactJson.MAX_DEPTH + 2} levels deep: refused`, deep(ExactJson.MAX_DEPTH + 2), ERROR],
  ["100,000 levels deep: an error, not a crash", deep(100_000), ERROR],
  ...["", "{", "[1,]", `{"a" 1}`, "01", "1.", "-", "tru", `"\t"`, "{} x", "[1 2]", "'a'", "NaN", "+1"].map(
    (text) => [`invalid: ${JSON.stringify(text)}`, text, ERROR] as const
  )
]

const circular: Record<string, unknown> = {}
circular["self"] = circular
/** Values and the text an exact writer gives (`JSON.stringify`'s, but for bigints). */
const writeCases: ReadonlyArray<readonly [string, unknown, string | typeof ERROR]> = [
  ["a bigint as its integer literal", { time: 1712345678901234567n }, `{"time":1712345678901234567}`],
  [
    "undefined, functions, NaN, toJSON",
    { a: undefined, f: () => 1, n: NaN, d: new Date(0) },
    `{"n":null,"d":"1970-01-01T00:00:00.000Z"}`
  ],
  ["undefined in an array", [undefined, 1n], "[null,1]"],
  ["undefined alone: null", undefined, "null"],
  ["a circular structure: an error", circular, ERROR]
]

const outcome = <A>(run: () => A): A | typeof ERROR => {
  try {
    return run()
  } catch {
    return ERROR
  }
}
const show = (value: unknown): string =>
  value === ERROR
    ? "an error"
    : typeof value === "bigint"
      ? `${value}n`
      : value === undefined
        ? "undefined"
        : `${ExactJson.stringify(value).slice(0, 40)}${
            typeof value === "object" && value !== null && Object.getPrototypeOf(value) === null
              ? " (no prototype)"
              : ""
          }`

const exactness = () => {
  const trials = [
    ...parsers.flatMap(([name, parse]) =>
      parseCases.map(([what, text, expected]) => ({ name, what, run: () => parse(text), expected }))
    ),
    ...writers.flatMap(([name, write]) =>
      writeCases.map(([what, value, expected]) => ({ name, what, run: () => write(value), expected }))
    )
  ]
  const failures = new Map<string, Array<string>>()
  for (const { name, what, run, expected } of trials) {
    const got = outcome(run)
    if (!isDeepStrictEqual(got, expected)) {
      failures.set(name, [
        ...(failures.get(name) ?? []),
        `${what}: ${show(got)} (expected ${show(expected)})`
      ])
    }
  }
  console.log(`exactness: ${parseCases.length} texts read, ${writeCases.length} values written`)
  for (const name of new Set([...parsers, ...writers].map(([n]) => n))) {
    const failed = failures.get(name) ?? []
    console.log(`  ${name}: ${failed.length === 0 ? "exact" : `${failed.length} off`}`)
    for (const line of failed) console.log(`    - ${line}`)
  }
}

// ---------------------------------------------------------------------------------------------
// The bodies
// ---------------------------------------------------------------------------------------------

const card = {
  capture_mode: "CONTACTLESS_CHIP",
  brand: "VISA",
  cardholder_name: "ANA PÉREZ",
  terminal_id: "SN0012345",
  masked_pan: "411111******1111",
  installments: 1,
  card_type: "CREDIT"
} as const

const notificationOf = (n: number, method: "CARD" | "PSE") =>
  Schema.decodeUnknownSync(Notification.Notification)({
    id: `2b6f0cc9-4c8e-4d6f-8f5e-${n.toString(16).padStart(12, "0")}`,
    type: n % 3 === 0 ? "SALE_REJECTED" : "SALE_APPROVED",
    subject: `TRX_${n}`,
    source: method === "CARD" ? "/payments" : "/online/link/v1",
    spec_version: "1.0",
    time: 1776178800123000000n + BigInt(n) * 1_000_000n,
    datacontenttype: "application/json",
    ...(method === "CARD" ? { seller: { name: "Luis", last_name: "Gómez", email: "luis@shop.co" } } : {}),
    data: {
      payment_id: `TRX_${n}`,
      merchant_id: "MER_shop1",
      created_at: "2026-04-14T10:31:02.123-05:00",
      amount: {
        currency: "COP",
        total: 11900 + n,
        taxes: [{ type: "VAT", base: 10000, value: 1900 }],
        tip: n % 2 === 0 ? 0 : 500
      },
      user_id: method === "CARD" ? "seller@shop.co" : "",
      metadata: { reference: `order-${n}` },
      service_code: method === "CARD" ? "SC-0001" : `LNK_${n}`,
      payer_email: "payer@mail.co",
      integration: "API_INTEGRATIONS",
      ...(method === "CARD"
        ? { payment_method: "CARD", card, approval_number: "123456" }
        : { payment_method: "PSE" })
    }
  })

/** The bodies as Cobro writes them: the values (bigint `time`) and their exact text. */
const bodies = [
  ["webhook notification", Schema.encodeSync(Notification.Notification)(notificationOf(1, "CARD"))],
  [
    "A4 response (10 items)",
    Schema.encodeSync(TerminalApi.NotificationsResponse)({
      notifications: Array.from({ length: 10 }, (_, i) => notificationOf(i + 1, i % 4 === 3 ? "PSE" : "CARD"))
    })
  ]
].map(([name, value]) => ({ name: name as string, value, text: ExactJson.stringify(value)! }))

// ---------------------------------------------------------------------------------------------
// Speed
// ---------------------------------------------------------------------------------------------

/** ops/s of `op` over about `roundMs`. */
const opsPerSecond = (op: () => unknown) => {
  let count = 0
  const start = performance.now()
  let elapsed = 0
  while (elapsed < roundMs) {
    for (let i = 0; i < 200; i++) op()
    count += 200
    elapsed = performance.now() - start
  }
  return (count * 1000) / elapsed
}

const median = (values: ReadonlyArray<number>) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)]!
}

const speed = () => {
  const exactParsers = parsers.slice(0, 2)
  const exactWriters = writers.slice(0, 2)
  for (const body of bodies) {
    // The candidates agree on these bodies, to the value and to the byte.
    const read = exactParsers[0]![1](body.text)
    for (const [name, parse] of exactParsers) {
      if (!isDeepStrictEqual(parse(body.text), read)) throw new Error(`${name} misreads ${body.name}`)
    }
    for (const [name, write] of exactWriters) {
      if (write(body.value) !== body.text) throw new Error(`${name} miswrites ${body.name}`)
    }
  }
  const ops = bodies.flatMap((body) => [
    ...[...exactParsers, ["JSON.parse (rounds time)", JSON.parse] as const].map(
      ([name, parse]) => ({ body: body.name, op: "parse", name, run: () => parse(body.text) }) as const
    ),
    ...exactWriters.map(
      ([name, write]) => ({ body: body.name, op: "stringify", name, run: () => write(body.value) }) as const
    )
  ])
  const samples = new Map<(typeof ops)[number], Array<number>>(ops.map((op) => [op, []]))
  for (const op of ops) opsPerSecond(op.run) // warm-up
  for (let round = 0; round < rounds; round++) {
    for (let i = 0; i < ops.length; i++) {
      const op = ops[(i + round) % ops.length]!
      samples.get(op)!.push(opsPerSecond(op.run))
    }
  }
  console.log(`\nspeed: median ops/s of ${rounds} rounds of ${roundMs} ms, node ${process.version}`)
  for (const body of bodies) {
    console.log(`  ${body.name} (${body.text.length} bytes)`)
    for (const kind of ["parse", "stringify"]) {
      const rows = ops.filter((o) => o.body === body.name && o.op === kind)
      const cobro = median(samples.get(rows[0]!)!)
      for (const row of rows) {
        const value = median(samples.get(row)!)
        const ratio = row === rows[0] ? "" : `  ×${(value / cobro).toFixed(2)} of cobro's`
        console.log(
          `    ${kind.padEnd(9)} ${row.name.padEnd(26)} ${Math.round(value).toLocaleString("en").padStart(10)} ops/s${ratio}`
        )
      }
    }
  }
}

exactness()
speed()
