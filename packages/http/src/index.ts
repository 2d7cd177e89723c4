/** @cobro/http: not built yet (see the open issues). */
export {}
