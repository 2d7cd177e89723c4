/** @cobro/pages: the hosted checkout and 3DS pages. Import a module by its path, e.g. `@cobro/pages/CheckoutPage`. */
export {}
