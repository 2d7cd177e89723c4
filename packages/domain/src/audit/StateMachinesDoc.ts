/**
 * Renders `docs/state-machines.md` from every aggregate's transition table, so that the docs, the
 * code and the property tests share one source. Other packages' state machines (the simulated
 * terminal's) join as further sections: the script that writes the file composes them, the domain
 * knowing nothing of them.
 */
import * as Merchant from "../merchants/Merchant.js"
import * as PanelUser from "../panel/PanelUser.js"
import * as Payment from "../online/Payment.js"
import * as PaymentIntent from "../online/PaymentIntent.js"
import * as PaymentLink from "../links/PaymentLink.js"
import * as Refund from "../online/Refund.js"
import * as TerminalCheckout from "../terminal/TerminalCheckout.js"
import * as Transitions from "../kernel/Transitions.js"
import * as WebhookDelivery from "../webhooks/WebhookDelivery.js"

/**
 * One state machine of the document.
 *
 * @category models
 */
export interface Section {
  readonly title: string
  /** The spec's sections it implements. */
  readonly spec: string
  readonly table: Transitions.Table<string, string>
}

/** The section of one of the domain's aggregates: its name is the title, its table the machine. */
const aggregateSection = (
  aggregate: { readonly name: string; readonly transitions: Transitions.Table<string, string> },
  spec: string
): Section => ({ title: aggregate.name, spec, table: aggregate.transitions })

/**
 * The domain's state machines, in the document's order.
 *
 * @category models
 */
export const sections: ReadonlyArray<Section> = [
  aggregateSection(PaymentLink.PaymentLink, "B (payment link status)"),
  aggregateSection(TerminalCheckout.TerminalCheckout, "A (terminal checkout lifecycle, R1–R7)"),
  aggregateSection(PaymentIntent.PaymentIntent, "C (payment intent)"),
  aggregateSection(Payment.Payment, "C (payment attempt and payment; void and refund preconditions)"),
  aggregateSection(Refund.Refund, "C (refund)"),
  aggregateSection(WebhookDelivery.WebhookDelivery, "D (registration, delivery and retries)"),
  aggregateSection(Merchant.Merchant, "Authentication; A preconditions; D registration"),
  aggregateSection(PanelUser.PanelUser, "issue 22 (the merchant panel's users and sign-in)")
]

const rows = (table: Transitions.Table<string, string>): string =>
  [
    "| from | command | to | records |",
    "|---|---|---|---|",
    ...Transitions.edges(table).map(([from, command, to]) =>
      to === Transitions.noop
        ? `| ${from} | ${command} | ${from} | nothing (no-op) |`
        : `| ${from} | ${command} | ${to} | ${to === from ? "events, stays" : "events"} |`
    )
  ].join("\n")

/**
 * One section: its absorbing states, its diagram and its table of edges.
 *
 * @category rendering
 */
export const renderSection = (section: Section): string =>
  [
    `## ${section.title}`,
    "",
    `Spec section ${section.spec}. Absorbing: ${
      Transitions.states(section.table)
        .filter((st) => st !== "Initial" && Transitions.isAbsorbing(section.table, st))
        .join(", ") || "none"
    }.`,
    "",
    Transitions.toMermaid(section.table),
    "",
    rows(section.table),
    ""
  ].join("\n")

/**
 * The whole document: the domain's sections, then `more` (another package's, composed by the script).
 *
 * @category rendering
 */
export const renderStateMachinesDoc = (more: ReadonlyArray<Section> = []): string =>
  [
    "# State machines",
    "",
    "Generated from the transition tables in `packages/domain/src` and `packages/terminal-sim/src` by",
    "`npm run docs:state-machines`; `packages/domain/test/audit/StateMachinesDoc.test.ts` and",
    "`packages/terminal-sim/test/SimTerminal.test.ts` fail when this file and the tables differ.",
    "A command absent from a state's row is refused with a typed error; `[*]` is the state before",
    "creation and, as a target, marks an absorbing state that no command leaves. An arrow records at",
    "least one event (an arrow back to its own state records events and stays); the note beside a",
    "state lists its no-ops: commands it accepts without recording anything.",
    "",
    ...[...sections, ...more].map(renderSection)
  ].join("\n")
