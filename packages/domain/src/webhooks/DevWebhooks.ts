/**
 * Development webhooks (`COBRO_DEV_WEBHOOKS=1`, W16): a developer's receiver is a plain
 * `http://` endpoint on their own machine, for production notifications as for sandbox ones. The
 * server provides it from its configuration; absent, the production rules hold.
 */
import * as Context from "effect/Context"

/**
 * Whether webhook URLs follow the development rules: `http://` allowed for both modes.
 *
 * @category services
 */
export class DevWebhooks extends Context.Reference<DevWebhooks>()("@cobro/domain/DevWebhooks", {
  defaultValue: (): { readonly enabled: boolean } => ({ enabled: false })
}) {}
