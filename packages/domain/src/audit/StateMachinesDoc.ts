/**
 * Renders `docs/state-machines.md` from every aggregate's transition table, so that the docs, the
 * code and the property tests share one source.
 */
import * as Merchant from "../merchants/Merchant.js"
import * as Payment from "../online/Payment.js"
import * as PaymentIntent from "../online/PaymentIntent.js"
import * as PaymentLink from "../links/PaymentLink.js"
import * as Refund from "../online/Refund.js"
import * as TerminalCheckout from "../terminal/TerminalCheckout.js"
import * as Transitions from "../kernel/Transitions.js"
import * as WebhookDelivery from "../webhooks/WebhookDelivery.js"

interface Section {
  readonly title: string
  readonly spec: string
  readonly table: Transitions.Table<string, string>
}

const sections: ReadonlyArray<Section> = [
  { title: "PaymentLink", spec: "B (payment link status)", table: PaymentLink.transitions },
  {
    title: "TerminalCheckout",
    spec: "A (terminal checkout lifecycle, R1–R7)",
    table: TerminalCheckout.transitions
  },
  { title: "PaymentIntent", spec: "C (payment intent)", table: PaymentIntent.transitions },
  {
    title: "Payment",
    spec: "C (payment attempt and payment; void and refund preconditions)",
    table: Payment.transitions
  },
  { title: "Refund", spec: "C (refund)", table: Refund.transitions },
  {
    title: "WebhookDelivery",
    spec: "D (registration, delivery and retries)",
    table: WebhookDelivery.transitions
  },
  { title: "Merchant", spec: "Authentication; A preconditions; D registration", table: Merchant.transitions }
]

const rows = (table: Transitions.Table<string, string>): string =>
  [
    "| from | command | to |",
    "|---|---|---|",
    ...Transitions.edges(table).map(
      ([from, command, to]) => `| ${from} | ${command} | ${to === from ? `${to} (no-op)` : to} |`
    )
  ].join("\n")

/** The whole document. */
export const renderStateMachinesDoc = (): string =>
  [
    "# State machines",
    "",
    "Generated from the transition tables in `packages/domain/src` by `npm run docs:state-machines`;",
    "`packages/domain/test/StateMachinesDoc.test.ts` fails when this file and the tables differ.",
    "A command absent from a state's row is refused with a typed error; `[*]` is the state before",
    "creation and, as a target, marks an absorbing state that no command leaves.",
    "",
    ...sections.flatMap((s) => [
      `## ${s.title}`,
      "",
      `Spec section ${s.spec}. Absorbing: ${
        Transitions.states(s.table)
          .filter((st) => st !== "Initial" && Transitions.isAbsorbing(s.table, st))
          .join(", ") || "none"
      }.`,
      "",
      Transitions.toMermaid(s.table),
      "",
      rows(s.table),
      ""
    ])
  ].join("\n")
