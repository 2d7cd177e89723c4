/** @cobro/api: Cobro's HTTP contract. Import a module by its path, e.g. `@cobro/api/Api`. */
export {}
