/**
 * The panel's integrations (issue 22, "Integrations"; spec, Authentication: "Keys are obtained in the
 * merchant panel, in the integrations section"): per integration (terminal API, payment button) and
 * mode, whether it is active, the identity key's prefix and fingerprint (the log keeps only its
 * hash: the key itself was shown once), and "revoke" (M4: a new pair replaces the old one at once),
 * behind a confirmation. The new pair is shown on the answer to the revocation and never again.
 */
import * as Merchant from "@cobro/domain/Merchant"
import * as MerchantAdmin from "@cobro/domain/MerchantAdmin"
import { Integration, KeyMode } from "@cobro/domain/SigningKey"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import * as FormKey from "./FormKey.js"
import * as Guard from "./PanelGuard.js"
import * as Html from "./PanelHtml.js"
import * as Request from "./PanelRequest.js"
import * as Text from "./PanelText.js"

/** The page's path. */
export const PATH = `${Html.PREFIX}/integrations`

const revokePath = (integration: Integration, mode: KeyMode) => `${PATH}/${integration}/${mode}/revoke`

const isIntegration = Schema.is(Integration)
const isMode = Schema.is(KeyMode)

/** The (integration, mode) of the path, if both are known. */
const target = Effect.gen(function* () {
  const integration = yield* Request.param("integration")
  const mode = yield* Request.param("mode")
  return isIntegration(integration) && isMode(mode) ? Option.some({ integration, mode }) : Option.none()
})

const merchantOf = (merchantId: string) => MerchantAdmin.getMerchant(merchantId).pipe(Effect.orDie)

const row = (context: Html.Context, merchant: Merchant.Existing, integration: Integration, mode: KeyMode) => {
  const t = Text.messages[context.locale]
  const keys = merchant.keys[integration]
  const pair = Merchant.keyPairFor(merchant, integration, mode)
  const id = `${integration}-${mode}`
  const revoke =
    Option.isSome(pair) && context.user?.role !== "read_only"
      ? `<a class="button secondary" id="revoke-${id}" href="${Html.escape(Html.href(context, revokePath(integration, mode)))}">${Html.escape(t.integrations.revoke)}</a>`
      : ""
  return `<tr data-testid="integration-row" data-integration="${integration}" data-mode="${mode}" data-active="${Option.isSome(pair)}">
<td>${Html.escape(t.integrations.names[integration])}</td>
<td>${Html.escape(t.modes[mode])}</td>
<td>${Option.isSome(pair) ? Html.status("ACTIVE") : Html.badge(t.integrations.inactive, "plain")}</td>
<td>${Option.match(pair, {
    onNone: () => "—",
    onSome: (p) =>
      `<code id="identity-key-${id}">${Html.escape(MerchantAdmin.keyPrefix("identity", integration, mode))}…</code><br><span class="meta">${Html.escape(t.integrations.fingerprint)} <code data-testid="fingerprint">${p.identityKeyHash.slice(0, 12)}</code></span>`
  })}</td>
<td class="nowrap">${Option.match(keys, { onNone: () => "—", onSome: (k) => Html.time(DateTime.toDate(k.activatedAt), context.locale) })}</td>
<td>${revoke}</td>
</tr>`
}

/** GET: every integration and mode. */
export const show = Guard.page((session, context) =>
  Effect.gen(function* () {
    const t = Text.messages[context.locale]
    const merchant = yield* merchantOf(session.merchantId)
    const rows = Integration.literals.flatMap((i) =>
      KeyMode.literals.map((m) => row(context, merchant, i, m))
    )
    return Request.respond(
      Html.tablePage(context, "integrations", {
        headers: [
          t.integrations.integration,
          t.modeLabel,
          t.payments.status,
          t.integrations.identityKey,
          t.integrations.activated,
          ""
        ],
        rows,
        empty: ""
      })
    )
  })
)

/** GET: asks before revoking a key. */
export const confirmRevoke = Guard.page((_session, context) =>
  Effect.gen(function* () {
    const t = Text.messages[context.locale]
    const found = yield* target
    if (Option.isNone(found)) return Request.respond(Html.messagePage(context, "notFound"), 404)
    const { integration, mode } = found.value
    return Request.respond(
      Html.confirmPage(context, "integrations", {
        title: t.integrations.revokeTitle,
        text: t.integrations.revokeText(t.integrations.names[integration], t.modes[mode]),
        action: revokePath(integration, mode),
        confirm: t.integrations.revokeConfirm,
        back: Html.href(context, PATH)
      })
    )
  })
)

/**
 * POST: revokes the key and shows the new pair, once: the answer itself is the page (no redirect, so
 * the secret is never stored to be shown again; `no-store` keeps it out of every cache). Once per
 * rendered form (`FormKey`): what the form's key keeps is a 303 to the integrations with a notice
 * that the keys were shown once, which a re-sent form gets (the pair itself is handed past the key
 * to the request that revoked, and to no other).
 */
export const revoke = Guard.action({ changes: true }, (session, context, form) =>
  Effect.gen(function* () {
    const t = Text.messages[context.locale]
    const found = yield* target
    if (Option.isNone(found)) return Request.respond(Html.messagePage(context, "notFound"), 404)
    const { integration, mode } = found.value
    const shownOnce = Request.redirect(Html.withNotice(Html.href(context, PATH), "keysShownOnce"))
    const revoked = yield* Ref.make(
      Option.none<{ readonly identityKey: string; readonly secretKey: string }>()
    )
    const answer = yield* FormKey.once(
      session,
      context,
      form,
      Effect.gen(function* () {
        const pair = yield* MerchantAdmin.rotateKey(
          session.merchantId,
          integration,
          mode,
          Guard.metadataOf(session)
        ).pipe(Effect.either)
        if (pair._tag === "Left") {
          return Request.redirect(Html.withNotice(Html.href(context, PATH), "notRevoked"))
        }
        yield* Ref.set(revoked, Option.some(pair.right))
        return shownOnce
      }),
      () => Effect.succeed(shownOnce)
    )
    const pair = yield* Ref.get(revoked)
    if (Option.isNone(pair)) return answer
    return Request.respond(
      Html.layout(
        context,
        "integrations",
        t.integrations.newKeysTitle,
        `<div class="card" id="new-keys" data-integration="${integration}" data-mode="${mode}"><h1>${Html.escape(t.integrations.newKeysTitle)}</h1>
${Html.notice("warn", "shown-once", t.integrations.shownOnce)}
<p>${Html.escape(t.integrations.revoked(t.integrations.names[integration], t.modes[mode]))}</p>
${Html.copyable("new-identity-key", t.integrations.identityKey, pair.value.identityKey, context.locale)}
${Html.copyable("new-secret-key", t.integrations.secretKey, pair.value.secretKey, context.locale)}
<p><a class="button primary" id="keys-done" href="${Html.escape(Html.href(context, PATH))}">${Html.escape(t.integrations.done)}</a></p></div>`
      )
    )
  })
)
