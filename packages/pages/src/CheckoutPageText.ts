/**
 * The words of the hosted checkout page (issue 6) in Spanish and English, the choice of one by the
 * browser's `Accept-Language`, and amounts written as their currency is (COP without decimals).
 */
import * as Language from "@cobro/domain/Locale"

/** The page's languages (`@cobro/domain/Locale`, shared with the merchant panel). */
export type Locale = Language.Locale

/** The language when the browser names neither: Cobro's payers are in Colombia. */
export const DEFAULT_LOCALE: Locale = Language.DEFAULT_LOCALE

/** The page's language: `lang`, else the browser's `Accept-Language`, else Spanish (`Locale.negotiate`). */
export const negotiate = Language.negotiate

/** The decimals an amount is shown with: none for COP, two otherwise (`Locale.fractionDigits`). */
export const fractionDigits = Language.fractionDigits

/** An amount as its currency is written in the page's language (`Locale.formatMoney`). */
export const formatMoney = Language.formatMoney

export const messages = {
  es: {
    title: "Pago",
    payTo: "Pago a",
    sandbox: "Modo de pruebas (sandbox): no se cobra dinero real.",
    reference: "Referencia",
    amount: "Valor a pagar",
    amountOpen: "¿Cuánto quieres pagar? (COP)",
    amountBounds: (min: string, max: string) => `Entre ${min} y ${max}.`,
    methodLegend: "Medio de pago",
    methods: {
      CREDIT_CARD: "Tarjeta de crédito o débito",
      PSE: "PSE (débito desde tu cuenta)",
      BOTON_BANK: "Botón bancario",
      WALLET_A: "Billetera digital"
    } as Record<string, string>,
    cardNumber: "Número de la tarjeta",
    cardName: "Nombre como aparece en la tarjeta",
    cardExpiry: "Vencimiento (MM/AA)",
    cardCvc: "Código de seguridad (CVC)",
    installments: "Cuotas",
    bank: "Tu banco",
    chooseBank: "Elige tu banco",
    bankButtonNote: "Te llevaremos a la página de tu banco para aprobar el pago.",
    phone: "Número de celular de la billetera",
    pay: (amount: string) => `Pagar ${amount}`,
    payOpen: "Pagar",
    processingButton: "Procesando…",
    errorSummary: "Revisa estos datos:",
    errors: {
      method: "Elige un medio de pago de la lista.",
      amountMissing: "Escribe el valor que quieres pagar.",
      amountFormat: "Escribe el valor en pesos, sin decimales (por ejemplo 50000).",
      amountBounds: (min: string, max: string) =>
        `El valor debe estar entre ${min} y ${max} para este medio de pago.`,
      cardNumber: "El número de la tarjeta no es válido: revisa los 13 a 19 dígitos.",
      cardName: "Escribe el nombre como aparece en la tarjeta.",
      cardExpiry: "Escribe un vencimiento válido (MM/AA) que no haya pasado.",
      cardCvc: "El código de seguridad tiene 3 o 4 dígitos.",
      installments: "Elige un número de cuotas de la lista.",
      bank: "Elige tu banco de la lista.",
      phone: "Escribe un celular colombiano de 10 dígitos (por ejemplo 3001234567).",
      unreadable: "No pudimos leer el formulario. Inténtalo de nuevo."
    },
    declined:
      "El pago fue rechazado. No se hizo ningún cobro: puedes intentarlo de nuevo o usar otro medio de pago.",
    status: {
      PROCESSING: "Hay un pago en curso para este enlace.",
      PAID: "Este enlace ya fue pagado.",
      EXPIRED: "Este enlace de pago venció y ya no se puede pagar.",
      CANCELLED: "Este enlace de pago fue cancelado y ya no se puede pagar.",
      REJECTED: "El pago de este enlace fue rechazado y ya no se puede pagar.",
      ACTIVE: "",
      NO_METHOD: "Este enlace no se puede pagar ahora: el comercio no tiene medios de pago disponibles."
    } as Record<string, string>,
    statusTitle: {
      PROCESSING: "Pago en curso",
      PAID: "Pagado",
      EXPIRED: "Enlace vencido",
      CANCELLED: "Enlace cancelado",
      REJECTED: "Pago rechazado",
      ACTIVE: "Pago"
    } as Record<string, string>,
    continuePayment: "Continuar el pago",
    paidTitle: "¡Pago aprobado!",
    paidText: "Recibimos tu pago. Puedes cerrar esta página.",
    transaction: "Transacción",
    method: "Medio de pago",
    returnToStore: "Volver a la tienda",
    notFoundTitle: "Enlace no encontrado",
    notFoundText: "Este enlace de pago no existe. Revisa la dirección o pide al comercio un enlace nuevo.",
    errorTitle: "Algo salió mal",
    errorText: "No pudimos procesar tu solicitud. No se hizo ningún cobro: inténtalo de nuevo en un momento.",
    step: {
      ThreeDsChallenge: {
        title: "Verificación 3-D Secure",
        text: "Tu banco te pide confirmar esta compra."
      },
      BankRedirect: { title: "Tu banco", text: "Aprueba el débito de este pago desde tu cuenta." },
      Wallet: { title: "Tu billetera", text: "Aprueba este pago en la aplicación de tu billetera." }
    } as Record<string, { title: string; text: string }>,
    simulated: "Página simulada por Cobro en lugar del banco o la billetera.",
    approve: "Aprobar",
    decline: "Rechazar",
    awaitingCard: "Estamos autorizando tu tarjeta. Esta página se actualiza sola.",
    alreadyDecided: "Este pago ya se decidió y no puede cambiar.",
    expiredTitle: "Pago vencido",
    expiredText:
      "Este pago venció: no se completó a tiempo en el banco, la billetera o la verificación 3-D Secure. No se hizo ningún cobro.",
    payAgain: "Pagar de nuevo",
    sandboxHelp: "Datos de prueba",
    sandboxCards:
      "Usa cualquier tarjeta válida, por ejemplo 4111 1111 1111 1111, con un vencimiento futuro y cualquier CVC.",
    sandboxAmounts: "El valor decide el resultado:",
    sandboxOutcomes: {
      "555001": "aprobado con 3DS",
      "555002": "rechazado por 3DS",
      "555020": "reto 3DS (aprobar o rechazar)",
      "555040": "aprobado sin 3DS",
      "555042": "rechazado por el motor de fraude",
      other: "cualquier otro valor: aprobado"
    } as Record<string, string>,
    securedBy: "Pagos procesados por Cobro",
    language: "English",
    languageName: "Español"
  },
  en: {
    title: "Payment",
    payTo: "Pay",
    sandbox: "Sandbox mode: no real money is charged.",
    reference: "Reference",
    amount: "Amount to pay",
    amountOpen: "How much do you want to pay? (COP)",
    amountBounds: (min: string, max: string) => `Between ${min} and ${max}.`,
    methodLegend: "Payment method",
    methods: {
      CREDIT_CARD: "Credit or debit card",
      PSE: "PSE (debit from your bank account)",
      BOTON_BANK: "Bank button",
      WALLET_A: "Digital wallet"
    } as Record<string, string>,
    cardNumber: "Card number",
    cardName: "Name as it appears on the card",
    cardExpiry: "Expiry (MM/YY)",
    cardCvc: "Security code (CVC)",
    installments: "Installments",
    bank: "Your bank",
    chooseBank: "Choose your bank",
    bankButtonNote: "We will take you to your bank's page to approve the payment.",
    phone: "Wallet mobile number",
    pay: (amount: string) => `Pay ${amount}`,
    payOpen: "Pay",
    processingButton: "Processing…",
    errorSummary: "Please check:",
    errors: {
      method: "Choose a payment method from the list.",
      amountMissing: "Enter the amount you want to pay.",
      amountFormat: "Enter the amount in pesos, without decimals (for example 50000).",
      amountBounds: (min: string, max: string) =>
        `The amount must be between ${min} and ${max} for this payment method.`,
      cardNumber: "The card number is not valid: check its 13 to 19 digits.",
      cardName: "Enter the name as it appears on the card.",
      cardExpiry: "Enter a valid expiry (MM/YY) that has not passed.",
      cardCvc: "The security code has 3 or 4 digits.",
      installments: "Choose a number of installments from the list.",
      bank: "Choose your bank from the list.",
      phone: "Enter a 10-digit Colombian mobile number (for example 3001234567).",
      unreadable: "We could not read the form. Please try again."
    },
    declined:
      "The payment was declined. Nothing was charged: you can try again or use another payment method.",
    status: {
      PROCESSING: "A payment for this link is under way.",
      PAID: "This link has been paid.",
      EXPIRED: "This payment link has expired and can no longer be paid.",
      CANCELLED: "This payment link was cancelled and can no longer be paid.",
      REJECTED: "The payment of this link was declined and it can no longer be paid.",
      ACTIVE: "",
      NO_METHOD: "This link cannot be paid right now: the merchant has no payment method available."
    } as Record<string, string>,
    statusTitle: {
      PROCESSING: "Payment under way",
      PAID: "Paid",
      EXPIRED: "Link expired",
      CANCELLED: "Link cancelled",
      REJECTED: "Payment declined",
      ACTIVE: "Payment"
    } as Record<string, string>,
    continuePayment: "Continue the payment",
    paidTitle: "Payment approved!",
    paidText: "We received your payment. You can close this page.",
    transaction: "Transaction",
    method: "Payment method",
    returnToStore: "Return to the store",
    notFoundTitle: "Link not found",
    notFoundText: "This payment link does not exist. Check the address or ask the merchant for a new link.",
    errorTitle: "Something went wrong",
    errorText: "We could not process your request. Nothing was charged: please try again in a moment.",
    step: {
      ThreeDsChallenge: {
        title: "3-D Secure verification",
        text: "Your bank asks you to confirm this purchase."
      },
      BankRedirect: { title: "Your bank", text: "Approve the debit of this payment from your account." },
      Wallet: { title: "Your wallet", text: "Approve this payment in your wallet app." }
    } as Record<string, { title: string; text: string }>,
    simulated: "A page simulated by Cobro in place of the bank or wallet.",
    approve: "Approve",
    decline: "Decline",
    awaitingCard: "We are authorizing your card. This page refreshes by itself.",
    alreadyDecided: "This payment was already decided and cannot change.",
    expiredTitle: "Payment expired",
    expiredText:
      "This payment expired: it was not completed in time at the bank, the wallet or the 3-D Secure verification. Nothing was charged.",
    payAgain: "Pay again",
    sandboxHelp: "Test data",
    sandboxCards: "Use any valid card, for example 4111 1111 1111 1111, with a future expiry and any CVC.",
    sandboxAmounts: "The amount decides the outcome:",
    sandboxOutcomes: {
      "555001": "approved with 3DS",
      "555002": "declined by 3DS",
      "555020": "3DS challenge (approve or decline)",
      "555040": "approved without 3DS",
      "555042": "declined by the fraud engine",
      other: "any other amount: approved"
    } as Record<string, string>,
    securedBy: "Payments processed by Cobro",
    language: "Español",
    languageName: "English"
  }
} as const

/** The sentences of one language. */
export type Messages = (typeof messages)[Locale]

/** The field errors the form can report. */
export type ErrorKey = keyof Messages["errors"]
