/**
 * Terminal sales written through the domain's use case (A3), with the listings workload's ports and
 * random ids, for the tests of the lists' order and paging.
 */
import type { MerchantId } from "@cobro/domain/Ids"
import * as TerminalPayments from "@cobro/domain/TerminalPayments"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as W from "../../../domain/test/listings/Workload.js"
import { randomIds } from "./Fixtures.js"

/**
 * A terminal sale (A3) of `merchantId` through the domain's use case, committed when it returns (or
 * with the caller's transaction): COP 1,000 + `i`, reference `ord-<i>`, so that sales tell apart.
 */
export const sale = (merchantId: MerchantId, i: number, sandbox = false) =>
  TerminalPayments.checkout(
    { merchantId, sandbox },
    {
      amount: { currency: "COP", total_amount: 1_000 + i, taxes: [], tip_amount: 0 },
      user_email: "seller@shop.co",
      payment_method: "POS",
      terminal_model: "SMART_PRO",
      terminal_serial: "SN0012345",
      reference: `ord-${i}`
    }
  ).pipe(Effect.provide(Layer.merge(W.ports, randomIds)), Effect.orDie)
