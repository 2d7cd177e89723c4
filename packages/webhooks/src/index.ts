/** @cobro/webhooks: not built yet (see the open issues). */
export {}
