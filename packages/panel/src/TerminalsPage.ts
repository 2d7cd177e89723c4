/**
 * The panel's terminals (issue 22, "Terminals"; spec A preconditions, M6: the merchant "selects the
 * terminals" for the API): every terminal bound to the merchant, its selection for the API switched
 * on or off (`MerchantAdmin.setTerminalApiEnabled`, recorded with the panel user as actor), and R6's
 * charge-notification setting of its sandbox device (the simulated terminal the sandbox drives, as
 * `PUT /sandbox/v1/terminals/{serial}/behavior` sets it).
 */
import type * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { TerminalSerial } from "@cobro/domain/Ids"
import type { MerchantId } from "@cobro/domain/Ids"
import * as Merchant from "@cobro/domain/Merchant"
import * as MerchantAdmin from "@cobro/domain/MerchantAdmin"
import type * as PanelSessions from "@cobro/domain/PanelSessions"
import * as TerminalSandbox from "@cobro/domain/TerminalSandbox"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as FormKey from "./FormKey.js"
import * as Guard from "./PanelGuard.js"
import * as Html from "./PanelHtml.js"
import * as Request from "./PanelRequest.js"
import * as Text from "./PanelText.js"

/** The page's path. */
export const PATH = `${Html.PREFIX}/terminals`

const decodeSerial = Schema.decodeUnknownOption(TerminalSerial)

const toggle = (
  context: Html.Context,
  action: string,
  serial: string,
  on: boolean,
  labels: { readonly on: string; readonly off: string },
  id: string
) =>
  Html.postButton(context, {
    action,
    label: on ? labels.off : labels.on,
    id,
    tone: "secondary",
    fields: { serial, enabled: on ? "false" : "true" }
  })

const row = (
  context: Html.Context,
  terminal: Merchant.Terminal,
  chargeNotifications: Option.Option<boolean>,
  index: number
) => {
  const t = Text.messages[context.locale]
  const canChange = context.user?.role !== "read_only"
  const r6 = Option.match(chargeNotifications, {
    onNone: () => "—",
    onSome: (on) =>
      `${Html.badge(on ? t.terminals.on : t.terminals.off, on ? "ok" : "plain", `charge-notifications-${index}`)} ${
        canChange
          ? toggle(
              context,
              `${PATH}/charge-notifications`,
              terminal.serial,
              on,
              t.terminals.chargeToggle,
              `toggle-charge-notifications-${index}`
            )
          : ""
      }`
  })
  return `<tr data-testid="terminal-row" data-serial="${Html.escape(terminal.serial)}" data-api-enabled="${terminal.apiEnabled}" data-charge-notifications="${Option.getOrElse(Option.map(chargeNotifications, String), () => "")}">
<td><code>${Html.escape(terminal.serial)}</code></td>
<td>${Html.escape(terminal.name)}</td>
<td>${Html.escape(terminal.model)}</td>
<td>${Html.badge(terminal.apiEnabled ? t.terminals.on : t.terminals.off, terminal.apiEnabled ? "ok" : "plain", `api-enabled-${index}`)} ${
    canChange
      ? toggle(
          context,
          `${PATH}/api`,
          terminal.serial,
          terminal.apiEnabled,
          t.terminals.apiToggle,
          `toggle-api-${index}`
        )
      : ""
  }</td>
<td>${r6}</td>
</tr>`
}

/** R6 on the terminal's sandbox device, if the simulator knows it. */
const chargeNotificationsOf = (merchantId: MerchantId, terminalSerial: TerminalSerial) =>
  Effect.flatMap(TerminalSandbox.TerminalSandbox, (sandbox) =>
    sandbox.state({ merchantId, terminalSerial }).pipe(
      Effect.map((state) => Option.some(state.charge_notifications)),
      Effect.orElseSucceed(() => Option.none<boolean>())
    )
  )

/** GET: the bound terminals. */
export const show = Guard.page((session, context) =>
  Effect.gen(function* () {
    const t = Text.messages[context.locale]
    const merchant = yield* MerchantAdmin.getMerchant(session.merchantId).pipe(Effect.orDie)
    const terminals = Merchant.boundTerminals(merchant)
    const r6 = yield* Effect.forEach(terminals, (terminal) =>
      chargeNotificationsOf(merchant.merchantId, terminal.serial)
    )
    return Request.respond(
      Html.tablePage(context, "terminals", {
        headers: [
          t.terminals.serial,
          t.terminals.name,
          t.terminals.model,
          t.terminals.api,
          t.terminals.chargeNotifications
        ],
        rows: terminals.map((terminal, i) => row(context, terminal, r6[i]!, i)),
        empty: t.terminals.empty,
        hint: t.terminals.chargeNotificationsHint
      })
    )
  })
)

/** The form's terminal and switch: a serial and `enabled=true|false`. */
const switchOf = (form: URLSearchParams) => {
  const serial = decodeSerial(Request.text(form, "serial", 100))
  const enabled = form.get("enabled")
  return Option.isSome(serial) && (enabled === "true" || enabled === "false")
    ? Option.some({ serial: serial.value, enabled: enabled === "true" })
    : Option.none()
}

/** The answer to a terminal's form that took effect. */
const updated = (context: Html.Context) =>
  Request.redirect(Html.withNotice(Html.href(context, PATH), "terminalUpdated"))

/**
 * A terminal's switch form: once it is authorised, `handler` runs with the form's switch (a 400 page
 * without one); a form that died after its effect is answered as one that took effect.
 */
const switchAction = <E, R>(
  handler: (
    session: PanelSessions.Session,
    context: Html.Context,
    chosen: { readonly serial: TerminalSerial; readonly enabled: boolean }
  ) => Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
) =>
  FormKey.action(
    { changes: true },
    (_session, context) => Effect.succeed(updated(context)),
    (session, context, form) =>
      Option.match(switchOf(form), {
        onNone: () => Effect.succeed(Request.respond(Html.messagePage(context, "badRequest"), 400)),
        onSome: (chosen) => handler(session, context, chosen)
      })
  )

/** POST: selects a terminal for the API or deselects it. */
export const setApi = switchAction((session, context, chosen) => {
  const back = (notice: Text.FlashKey) => Request.redirect(Html.withNotice(Html.href(context, PATH), notice))
  return MerchantAdmin.setTerminalApiEnabled(
    session.merchantId,
    chosen.serial,
    chosen.enabled,
    Guard.metadataOf(session)
  ).pipe(
    Effect.as(back("terminalUpdated")),
    Effect.catchAll((e) =>
      e._tag === "TerminalNotBound" ? Effect.succeed(back("terminalNotFound")) : Effect.die(e)
    )
  )
})

/**
 * POST: turns R6's charge notifications of the terminal's sandbox device on or off, keeping its
 * behaviour; the device's stream records the user as actor.
 */
export const setChargeNotifications = switchAction((session, context, chosen) =>
  Effect.gen(function* () {
    const merchant = yield* MerchantAdmin.getMerchant(session.merchantId).pipe(Effect.orDie)
    const ref = { merchantId: merchant.merchantId, terminalSerial: chosen.serial }
    const sandbox = yield* TerminalSandbox.TerminalSandbox
    const changed = yield* sandbox.state(ref).pipe(
      Effect.flatMap((state) =>
        sandbox.setBehavior(ref, state.behavior, {
          chargeNotifications: chosen.enabled,
          metadata: Guard.metadataOf(session)
        })
      ),
      Effect.option
    )
    return Request.redirect(
      Html.withNotice(
        Html.href(context, PATH),
        Option.isSome(changed) ? "terminalUpdated" : "terminalNotFound"
      )
    )
  })
)
