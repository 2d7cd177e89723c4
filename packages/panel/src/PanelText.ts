/**
 * The words of the merchant panel (issue 22) in Spanish and English — the checkout page's languages,
 * chosen the same way (`lang`, else `Accept-Language`, else Spanish) — and times written in Bogotá's
 * time, the merchants' own.
 */
import * as Language from "@cobro/domain/Locale"

/** The panel's languages: the checkout page's. */
export type Locale = Language.Locale

/** The page's language: `lang` when it is `es` or `en`, else `Accept-Language`, else Spanish. */
export const negotiate = Language.negotiate

/** What an error of the link form (`LinkForm`) says: a key of the texts' `links.errors`. */
export type LinkErrorKey =
  | "amountType"
  | "totalRequired"
  | "totalBelowParts"
  | "totalOutsideBounds"
  | "amount"
  | "currency"
  | "description"
  | "reference"
  | "expiration"
  | "expirationPast"
  | "methodNotOffered"
  | "noMethods"
  | "method"
  | "callbackUrl"
  | "payerEmail"
  | "imageUrl"
  | "buttonInactive"
  | "merchantDisabled"

const timeFormats: Record<Locale, Intl.DateTimeFormat> = {
  es: new Intl.DateTimeFormat("es-CO", {
    timeZone: "America/Bogota",
    year: "numeric",
    month: "short",
    day: "numeric",
    hour: "2-digit",
    minute: "2-digit",
    second: "2-digit",
    hour12: false
  }),
  en: new Intl.DateTimeFormat("en-US", {
    timeZone: "America/Bogota",
    year: "numeric",
    month: "short",
    day: "numeric",
    hour: "2-digit",
    minute: "2-digit",
    second: "2-digit",
    hour12: false
  })
}

/** An instant in Bogotá's time: `21 nov 2026, 10:00:00` (es), `Nov 21, 2026, 10:00:00` (en). */
export const formatTime = (instant: Date, locale: Locale): string =>
  timeFormats[locale].format(instant).replace(/\u00a0/g, " ")

/** The one-time notices a page shows after the form that led to it (`notice=<key>`). */
export const FLASH_TONES = {
  resent: "ok",
  notResendable: "bad",
  noWebhook: "bad",
  changedMeanwhile: "bad",
  linkCreated: "ok",
  linkCancelled: "ok",
  notCancellable: "bad",
  notRevoked: "bad",
  webhookSaved: "ok",
  webhookDeleted: "ok",
  testSent: "ok",
  noTestWebhook: "bad",
  terminalUpdated: "ok",
  terminalNotFound: "bad",
  passwordChanged: "ok",
  keysShownOnce: "bad"
} as const satisfies Record<string, "ok" | "bad">

/** A one-time notice. */
export type FlashKey = keyof typeof FLASH_TONES

/** Whether a query's `notice` names one. */
export const isFlashKey = (key: string): key is FlashKey =>
  Object.prototype.hasOwnProperty.call(FLASH_TONES, key)

/** The facts a transaction's page may list. */
export type FactKey =
  | "checkout"
  | "terminal"
  | "approvalNumber"
  | "rejectionReason"
  | "link"
  | "linkStatus"
  | "description"
  | "threeDs"
  | "refund"
  | "maskedPan"
  | "brand"
  | "cardholder"
  | "installments"
  | "captureMode"

/** The answers that are not a section's page (`PanelHtml.messagePage`). */
export type MessageKey =
  | "forbidden"
  | "readOnly"
  | "csrf"
  | "notFound"
  | "methodNotAllowed"
  | "error"
  | "badRequest"
  | "formBusy"
  | "formUsed"

const es = {
  otherLanguage: "English",
  navLabel: "Secciones del panel",
  nav: {
    payments: "Pagos",
    links: "Enlaces",
    integrations: "Integraciones",
    webhooks: "Webhooks",
    terminals: "Datáfonos"
  },
  modeLabel: "Modo",
  modes: { production: "Producción", test: "Pruebas" },
  testModeBanner: "Modo de pruebas: ves y creas datos de sandbox, sin dinero real.",
  roles: { full_access: "Acceso completo", read_only: "Solo lectura" },
  signOut: "Cerrar sesión",
  merchantLabel: "Cuenta",
  changePassword: "Cambiar contraseña",
  goBack: "Volver",
  backToPanel: "Volver al panel",
  any: "Todos",
  copy: "Copiar",
  copied: "Copiado",
  newer: "← Más recientes",
  older: "Más antiguos →",
  firstPage: "Primera página",
  pagesLabel: "Páginas",
  errorSummary: "Revisa estos datos:",
  milliseconds: (ms: number) => `${Math.round(ms)} ms`,
  kinds: { terminal: "Datáfono", link: "Enlace de pago", online: "Pago en línea" },
  methods: {
    CREDIT_CARD: "Tarjeta de crédito o débito",
    PSE: "PSE",
    BOTON_BANK: "Botón bancario",
    WALLET_A: "Billetera digital"
  } as Record<string, string>,
  flash: {
    resent: "La notificación se enviará de nuevo en unos segundos.",
    notResendable: "Solo se puede reenviar una notificación entregada o agotada.",
    noWebhook: "No hay un webhook registrado para el modo de esta notificación.",
    changedMeanwhile: "La notificación cambió mientras tanto: inténtalo de nuevo.",
    linkCreated: "Enlace creado.",
    linkCancelled: "Enlace cancelado: ya no se puede pagar.",
    notCancellable: "Solo se puede cancelar un enlace activo (sin pago en curso).",
    notRevoked: "No se pudo revocar la llave: la integración no está activa.",
    webhookSaved: "Webhook guardado.",
    webhookDeleted: "Webhook eliminado: las notificaciones dejan de enviarse a él.",
    testSent: "Notificación de prueba programada: aquí verás cada intento de entrega.",
    noTestWebhook: "Registra primero un webhook de pruebas (o de producción) para recibir la notificación.",
    terminalUpdated: "Datáfono actualizado.",
    terminalNotFound: "Ese datáfono no está vinculado a tu cuenta.",
    passwordChanged: "Contraseña cambiada: tus otras sesiones se cerraron.",
    keysShownOnce:
      "Este formulario ya revocó la llave: sus llaves nuevas se mostraron una sola vez. Si no las copiaste, revócala de nuevo."
  } satisfies Record<FlashKey, string>,
  messagesPages: {
    forbidden: { title: "Acceso denegado", text: "No puedes hacer esto." },
    readOnly: {
      title: "Solo lectura",
      text: "Tu usuario es de solo lectura: puede ver todo, pero no cambiar nada. Pide acceso completo a quien administra la cuenta."
    },
    csrf: {
      title: "Formulario vencido",
      text: "El formulario no es válido o venció. Vuelve a la página y envíalo de nuevo."
    },
    notFound: { title: "No encontrado", text: "Esto no existe o no pertenece a tu cuenta." },
    methodNotAllowed: { title: "Acción no disponible", text: "Esta página no admite esa acción." },
    error: {
      title: "Algo salió mal",
      text: "No pudimos procesar tu solicitud. Inténtalo de nuevo en un momento."
    },
    badRequest: { title: "Solicitud no válida", text: "La dirección tiene datos que no entendemos." },
    formBusy: {
      title: "Formulario en curso",
      text: "Este formulario ya se está procesando. Espera un momento y vuelve a la página para ver el resultado."
    },
    formUsed: {
      title: "Formulario ya enviado",
      text: "Este formulario ya se envió con otros datos. Vuelve a la página y llena uno nuevo."
    }
  } satisfies Record<MessageKey, { title: string; text: string }>,
  login: {
    title: "Iniciar sesión",
    email: "Correo electrónico",
    password: "Contraseña",
    submit: "Ingresar",
    refused: "El correo o la contraseña no son correctos.",
    throttled: (seconds: number) =>
      `Demasiados intentos fallidos. Espera ${seconds} ${seconds === 1 ? "segundo" : "segundos"} e inténtalo de nuevo.`
  },
  password: {
    title: "Cambiar contraseña",
    current: "Contraseña actual",
    next: "Contraseña nueva",
    hint: (min: number, max: number) => `De ${min} a ${max} caracteres. Tus otras sesiones se cerrarán.`,
    submit: "Cambiar contraseña",
    back: "Volver al panel",
    wrong: "La contraseña actual no es correcta.",
    weak: (min: number, max: number) => `La contraseña nueva debe tener de ${min} a ${max} caracteres.`
  },
  payments: {
    title: "Pagos",
    status: "Estado",
    kind: "Tipo",
    from: "Creado desde",
    to: "Creado hasta",
    reference: "Referencia",
    apply: "Filtrar",
    clear: "Limpiar",
    created: "Creado",
    amount: "Valor",
    empty: "No hay pagos con estos filtros.",
    badDate: "Escribe una fecha válida (AAAA-MM-DD)."
  },
  payment: {
    title: "Pago",
    summary: "Resumen",
    tip: "Propina",
    taxes: "Impuestos",
    method: "Medio de pago",
    card: "Tarjeta",
    noCard: "Sin datos de tarjeta registrados.",
    notifications: "Notificaciones",
    noNotifications: "Este pago no tiene notificaciones.",
    history: "Historial",
    noHistory: "Sin eventos.",
    time: "Hora",
    stream: "Flujo",
    event: "Evento",
    actor: "Quién",
    stateAfter: "Estado después"
  },
  facts: {
    checkout: "Checkout",
    terminal: "Datáfono",
    approvalNumber: "Número de aprobación",
    rejectionReason: "Motivo del rechazo",
    link: "Enlace",
    linkStatus: "Estado del enlace",
    description: "Descripción",
    threeDs: "Autenticación",
    refund: "Reembolso",
    maskedPan: "Número",
    brand: "Franquicia",
    cardholder: "Titular",
    installments: "Cuotas",
    captureMode: "Lectura"
  } satisfies Record<FactKey, string>,
  notifications: {
    title: "Notificación",
    id: "Id",
    url: "Enviada a",
    subject: "Transacción",
    nextAttempt: "Próximo intento",
    time: "Hora",
    result: "Resultado",
    latency: "Latencia",
    snippet: "Respuesta",
    noAttempts: "Aún no hay intentos.",
    body: "Cuerpo enviado",
    resend: "Reenviar"
  },
  links: {
    title: "Enlaces de pago",
    new: "Crear enlace",
    create: "Crear enlace",
    created: "Enlace creado. Compártelo con quien debe pagar:",
    url: "Dirección",
    expires: "Vence",
    empty: "No hay enlaces.",
    open: "Abierto",
    cancel: "Cancelar",
    cancelTitle: "¿Cancelar este enlace?",
    cancelText: (reference: string, linkId: string) =>
      `El enlace ${reference} (${linkId}) dejará de poder pagarse. Esto no se puede deshacer.`,
    cancelConfirm: "Sí, cancelar el enlace",
    amountType: "Valor",
    amountTypes: { CLOSE: "Valor fijo", OPEN: "Valor abierto (lo elige quien paga)" },
    total: "Valor total",
    totalHint: "Incluye propina e impuestos. Por ejemplo 50000.",
    currency: "Moneda",
    tip: "Propina (opcional)",
    description: "Descripción (opcional)",
    descriptionHint: "De 2 a 100 caracteres; quien paga la ve.",
    referenceHint:
      "Tu referencia: letras, dígitos, '_' o '-' (hasta 60). Si la dejas vacía, es el id del enlace.",
    expiration: "Vence (hora de Bogotá, opcional)",
    expirationHint: "Sin fecha, el enlace no vence.",
    methods: "Medios de pago",
    methodsHint: "Si no eliges ninguno, el enlace ofrece todos los que tienes activos.",
    noMethodsOffered: "Tu cuenta no ofrece medios de pago para enlaces.",
    callbackUrl: "Dirección de regreso (opcional)",
    callbackUrlHint: "https://… a donde vuelve quien paga cuando el pago se aprueba.",
    payerEmail: "Correo de quien paga (opcional)",
    imageUrl: "Imagen (opcional)",
    imageUrlHint: "https://… de una imagen .png o .jpg.",
    errors: {
      amountType: "Elige valor fijo o abierto.",
      totalRequired: "Escribe el valor total del enlace.",
      totalBelowParts: "El valor total debe incluir la propina y los impuestos: es menor que su suma.",
      totalOutsideBounds: "El valor está fuera de los límites de todos los medios de pago del enlace.",
      amount: "Escribe un valor válido, sin signos (por ejemplo 50000 o 12.50), de máximo dos decimales.",
      currency: "Elige COP o USD.",
      description: "La descripción debe tener de 2 a 100 caracteres.",
      reference: "La referencia admite de 1 a 60 letras, dígitos, '_' o '-'.",
      expiration: "Escribe una fecha y hora válidas.",
      expirationPast: "La fecha de vencimiento debe ser futura.",
      methodNotOffered: "Ese medio de pago no está activo en tu cuenta.",
      noMethods: "Tu cuenta no ofrece medios de pago para enlaces: actívalos primero.",
      method: "Elige medios de pago de la lista.",
      callbackUrl: "Escribe una dirección válida que empiece por https://.",
      payerEmail: "Escribe un correo electrónico válido.",
      imageUrl: "Escribe una dirección https:// de una imagen .png o .jpg.",
      buttonInactive: "La integración del botón de pagos no está activa para este modo.",
      merchantDisabled: "Tu cuenta está deshabilitada: no puede crear enlaces."
    } satisfies Record<LinkErrorKey, string>
  },
  integrations: {
    title: "Integraciones",
    intro:
      "Cada integración tiene una llave por modo. La llave de identidad y la secreta se muestran una sola vez, al activarla o revocarla: aquí ves su prefijo y su huella.",
    integration: "Integración",
    names: { terminal_api: "API de datáfonos", payment_button: "Botón de pagos y enlaces" },
    inactive: "Inactiva",
    identityKey: "Llave de identidad",
    secretKey: "Llave secreta",
    fingerprint: "Huella SHA-256:",
    activated: "Activada",
    revoke: "Revocar",
    revokeTitle: "¿Revocar esta llave?",
    revokeText: (integration: string, mode: string) =>
      `Se creará una llave nueva para ${integration} (${mode}). La actual dejará de funcionar de inmediato: actualiza tus sistemas con la nueva.`,
    revokeConfirm: "Sí, revocar la llave",
    newKeysTitle: "Tus llaves nuevas",
    shownOnce: "Copia estas llaves ahora: no volverán a mostrarse.",
    revoked: (integration: string, mode: string) =>
      `La llave anterior de ${integration} (${mode}) ya no funciona.`,
    done: "Ya las guardé"
  },
  webhooks: {
    title: "Webhooks",
    titles: { production: "Webhook de producción", test: "Webhook de pruebas" },
    none: "Ninguno registrado.",
    url: "Dirección (URL)",
    productionHint: "Debe empezar por https://.",
    testHint: "Recibe las notificaciones de sandbox. Puede ser http://.",
    invalidUrl: (mode: "production" | "test", httpAllowed: boolean): string =>
      mode === "production" && !httpAllowed
        ? "El webhook de producción debe ser una dirección válida que empiece por https://."
        : "Escribe una dirección válida que empiece por http:// o https://.",
    standardWebhooks: "Enviar también los encabezados de Standard Webhooks",
    standardWebhooksHint: "webhook-id, webhook-timestamp y webhook-signature, además de la firma de Cobro.",
    save: "Guardar",
    delete: "Eliminar",
    deleteTitle: "¿Eliminar este webhook?",
    deleteText: (mode: string) =>
      `Las notificaciones de ${mode} dejarán de enviarse a esta dirección, también las que están pendientes.`,
    testTitle: "Notificación de prueba",
    testText:
      "Envía una notificación SALE_APPROVED de sandbox (1.000 COP, referencia cobro-test-notification) al webhook de pruebas, o al de producción si no hay uno de pruebas.",
    sendTest: "Enviar notificación de prueba",
    recent: (mode: string) => `Entregas recientes (${mode}): fallidas primero`,
    type: "Tipo",
    delivery: "Entrega",
    attempts: "Intentos",
    lastStatus: "Último código",
    noDeliveries: "Aún no hay entregas en este modo."
  },
  terminals: {
    title: "Datáfonos",
    intro: "Los datáfonos vinculados a tu cuenta. Solo los habilitados para la API reciben cobros de la API.",
    serial: "Serial",
    name: "Nombre",
    model: "Modelo",
    api: "API",
    on: "Activado",
    off: "Desactivado",
    apiToggle: { on: "Habilitar para la API", off: "Deshabilitar para la API" },
    chargeNotifications: "Notificaciones de cobro (sandbox)",
    chargeToggle: { on: "Activar", off: "Desactivar" },
    chargeNotificationsHint:
      "Con las notificaciones de cobro activadas (lo normal), el cajero abre cada cobro en el datáfono; desactivadas, el cobro empieza sin intervención. Aplica al datáfono simulado de sandbox.",
    empty: "No tienes datáfonos vinculados."
  }
}

/** Every sentence the panel shows, in one language. */
export type Messages = typeof es

const en: Messages = {
  otherLanguage: "Español",
  navLabel: "Panel sections",
  nav: {
    payments: "Payments",
    links: "Links",
    integrations: "Integrations",
    webhooks: "Webhooks",
    terminals: "Terminals"
  },
  modeLabel: "Mode",
  modes: { production: "Production", test: "Test" },
  testModeBanner: "Test mode: you see and create sandbox data, no real money.",
  roles: { full_access: "Full access", read_only: "Read only" },
  signOut: "Sign out",
  merchantLabel: "Account",
  changePassword: "Change password",
  goBack: "Go back",
  backToPanel: "Back to the panel",
  any: "Any",
  copy: "Copy",
  copied: "Copied",
  newer: "← Newer",
  older: "Older →",
  firstPage: "First page",
  pagesLabel: "Pages",
  errorSummary: "Please check:",
  milliseconds: (ms: number) => `${Math.round(ms)} ms`,
  kinds: { terminal: "Terminal", link: "Payment link", online: "Online payment" },
  methods: {
    CREDIT_CARD: "Credit or debit card",
    PSE: "PSE",
    BOTON_BANK: "Bank button",
    WALLET_A: "Digital wallet"
  },
  flash: {
    resent: "The notification will be sent again in a few seconds.",
    notResendable: "Only a delivered or exhausted notification can be re-sent.",
    noWebhook: "No webhook is registered for this notification's mode.",
    changedMeanwhile: "The notification changed meanwhile: please try again.",
    linkCreated: "Link created.",
    linkCancelled: "Link cancelled: it can no longer be paid.",
    notCancellable: "Only an active link (with no payment under way) can be cancelled.",
    notRevoked: "The key could not be revoked: the integration is not active.",
    webhookSaved: "Webhook saved.",
    webhookDeleted: "Webhook deleted: notifications are no longer sent to it.",
    testSent: "Test notification scheduled: every delivery attempt shows here.",
    noTestWebhook: "Register a test (or production) webhook first to receive the notification.",
    terminalUpdated: "Terminal updated.",
    terminalNotFound: "That terminal is not bound to your account.",
    passwordChanged: "Password changed: your other sessions were signed out.",
    keysShownOnce:
      "This form already revoked the key: its new keys were shown once. If you did not copy them, revoke it again."
  },
  messagesPages: {
    forbidden: { title: "Access denied", text: "You cannot do this." },
    readOnly: {
      title: "Read only",
      text: "Your user is read-only: it can see everything and change nothing. Ask whoever manages the account for full access."
    },
    csrf: {
      title: "Form expired",
      text: "The form is not valid or has expired. Go back to the page and send it again."
    },
    notFound: { title: "Not found", text: "This does not exist or does not belong to your account." },
    methodNotAllowed: { title: "Action not available", text: "This page does not take that action." },
    error: {
      title: "Something went wrong",
      text: "We could not process your request. Please try again in a moment."
    },
    badRequest: { title: "Bad request", text: "The address holds something we do not understand." },
    formBusy: {
      title: "Form in progress",
      text: "This form is still being processed. Wait a moment, then go back to the page to see its outcome."
    },
    formUsed: {
      title: "Form already sent",
      text: "This form was already sent with other values. Go back to the page and fill in a new one."
    }
  },
  login: {
    title: "Sign in",
    email: "Email",
    password: "Password",
    submit: "Sign in",
    refused: "The email or the password is not correct.",
    throttled: (seconds: number) =>
      `Too many failed attempts. Wait ${seconds} ${seconds === 1 ? "second" : "seconds"} and try again.`
  },
  password: {
    title: "Change password",
    current: "Current password",
    next: "New password",
    hint: (min: number, max: number) =>
      `${min} to ${max} characters. Your other sessions will be signed out.`,
    submit: "Change password",
    back: "Back to the panel",
    wrong: "The current password is not correct.",
    weak: (min: number, max: number) => `The new password must be ${min} to ${max} characters.`
  },
  payments: {
    title: "Payments",
    status: "Status",
    kind: "Kind",
    from: "Created from",
    to: "Created to",
    reference: "Reference",
    apply: "Filter",
    clear: "Clear",
    created: "Created",
    amount: "Amount",
    empty: "No payments match these filters.",
    badDate: "Enter a valid date (YYYY-MM-DD)."
  },
  payment: {
    title: "Payment",
    summary: "Summary",
    tip: "Tip",
    taxes: "Taxes",
    method: "Payment method",
    card: "Card",
    noCard: "No card details recorded.",
    notifications: "Notifications",
    noNotifications: "This payment has no notifications.",
    history: "History",
    noHistory: "No events.",
    time: "Time",
    stream: "Stream",
    event: "Event",
    actor: "Who",
    stateAfter: "State after"
  },
  facts: {
    checkout: "Checkout",
    terminal: "Terminal",
    approvalNumber: "Approval number",
    rejectionReason: "Rejection reason",
    link: "Link",
    linkStatus: "Link status",
    description: "Description",
    threeDs: "Authentication",
    refund: "Refund",
    maskedPan: "Number",
    brand: "Brand",
    cardholder: "Cardholder",
    installments: "Installments",
    captureMode: "Capture"
  },
  notifications: {
    title: "Notification",
    id: "Id",
    url: "Sent to",
    subject: "Transaction",
    nextAttempt: "Next attempt",
    time: "Time",
    result: "Result",
    latency: "Latency",
    snippet: "Response",
    noAttempts: "No attempts yet.",
    body: "Body sent",
    resend: "Re-send"
  },
  links: {
    title: "Payment links",
    new: "Create link",
    create: "Create link",
    created: "Link created. Share it with whoever pays:",
    url: "Address",
    expires: "Expires",
    empty: "No links.",
    open: "Open",
    cancel: "Cancel",
    cancelTitle: "Cancel this link?",
    cancelText: (reference: string, linkId: string) =>
      `The link ${reference} (${linkId}) will no longer be payable. This cannot be undone.`,
    cancelConfirm: "Yes, cancel the link",
    amountType: "Amount",
    amountTypes: { CLOSE: "Fixed amount", OPEN: "Open amount (the payer chooses)" },
    total: "Total amount",
    totalHint: "Tip and taxes included. For example 50000.",
    currency: "Currency",
    tip: "Tip (optional)",
    description: "Description (optional)",
    descriptionHint: "2 to 100 characters; the payer sees it.",
    referenceHint: "Your reference: letters, digits, '_' or '-' (up to 60). Left empty, it is the link's id.",
    expiration: "Expires (Bogotá time, optional)",
    expirationHint: "Without a date the link does not expire.",
    methods: "Payment methods",
    methodsHint: "Choose none and the link offers every method your account has active.",
    noMethodsOffered: "Your account offers no payment link methods.",
    callbackUrl: "Return address (optional)",
    callbackUrlHint: "https://… where the payer goes back to once the payment is approved.",
    payerEmail: "Payer's email (optional)",
    imageUrl: "Image (optional)",
    imageUrlHint: "https://… of a .png or .jpg image.",
    errors: {
      amountType: "Choose a fixed or an open amount.",
      totalRequired: "Enter the link's total amount.",
      totalBelowParts: "The total must include the tip and the taxes: it is less than their sum.",
      totalOutsideBounds: "The amount is outside the bounds of every payment method of the link.",
      amount: "Enter a valid amount, without signs (for example 50000 or 12.50), with at most two decimals.",
      currency: "Choose COP or USD.",
      description: "The description must have 2 to 100 characters.",
      reference: "The reference takes 1 to 60 letters, digits, '_' or '-'.",
      expiration: "Enter a valid date and time.",
      expirationPast: "The expiry must be in the future.",
      methodNotOffered: "That payment method is not active on your account.",
      noMethods: "Your account offers no payment link methods: activate some first.",
      method: "Choose payment methods from the list.",
      callbackUrl: "Enter a valid address starting with https://.",
      payerEmail: "Enter a valid email address.",
      imageUrl: "Enter an https:// address of a .png or .jpg image.",
      buttonInactive: "The payment button integration is not active for this mode.",
      merchantDisabled: "Your account is disabled: it cannot create links."
    }
  },
  integrations: {
    title: "Integrations",
    intro:
      "Each integration has a key pair per mode. The identity key and the secret key are shown once, when activated or revoked: here you see their prefix and fingerprint.",
    integration: "Integration",
    names: { terminal_api: "Terminal API", payment_button: "Payment button and links" },
    inactive: "Inactive",
    identityKey: "Identity key",
    secretKey: "Secret key",
    fingerprint: "SHA-256 fingerprint:",
    activated: "Activated",
    revoke: "Revoke",
    revokeTitle: "Revoke this key?",
    revokeText: (integration: string, mode: string) =>
      `A new key pair will be created for ${integration} (${mode}). The current one stops working at once: update your systems with the new one.`,
    revokeConfirm: "Yes, revoke the key",
    newKeysTitle: "Your new keys",
    shownOnce: "Copy these keys now: they will not be shown again.",
    revoked: (integration: string, mode: string) =>
      `The previous key of ${integration} (${mode}) no longer works.`,
    done: "I have saved them"
  },
  webhooks: {
    title: "Webhooks",
    titles: { production: "Production webhook", test: "Test webhook" },
    none: "None registered.",
    url: "Address (URL)",
    productionHint: "Must start with https://.",
    testHint: "Receives the sandbox notifications. May be http://.",
    invalidUrl: (mode: "production" | "test", httpAllowed: boolean) =>
      mode === "production" && !httpAllowed
        ? "The production webhook must be a valid address starting with https://."
        : "Enter a valid address starting with http:// or https://.",
    standardWebhooks: "Also send the Standard Webhooks headers",
    standardWebhooksHint: "webhook-id, webhook-timestamp and webhook-signature, besides Cobro's signature.",
    save: "Save",
    delete: "Delete",
    deleteTitle: "Delete this webhook?",
    deleteText: (mode: string) =>
      `${mode} notifications will no longer be sent to this address, pending ones included.`,
    testTitle: "Test notification",
    testText:
      "Sends a sandbox SALE_APPROVED notification (COP 1,000, reference cobro-test-notification) to the test webhook, or to the production one when there is no test webhook.",
    sendTest: "Send a test notification",
    recent: (mode: string) => `Recent deliveries (${mode}): failures first`,
    type: "Type",
    delivery: "Delivery",
    attempts: "Attempts",
    lastStatus: "Last status",
    noDeliveries: "No deliveries in this mode yet."
  },
  terminals: {
    title: "Terminals",
    intro: "The terminals bound to your account. Only those enabled for the API take charges from the API.",
    serial: "Serial",
    name: "Name",
    model: "Model",
    api: "API",
    on: "On",
    off: "Off",
    apiToggle: { on: "Enable for the API", off: "Disable for the API" },
    chargeNotifications: "Charge notifications (sandbox)",
    chargeToggle: { on: "Turn on", off: "Turn off" },
    chargeNotificationsHint:
      "With charge notifications on (the default) the cashier opens each charge on the terminal; off, a charge starts with no manual step. This applies to the simulated sandbox terminal.",
    empty: "You have no terminals bound."
  }
}

/** Every sentence the panel shows, in both languages. */
export const messages: Record<Locale, Messages> = { es, en }
