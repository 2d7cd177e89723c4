/** The store contract on embedded PGlite, persisted to a fresh temp folder. */
import * as Databases from "./support/Databases.js"
import { storeContract } from "./support/StoreContract.js"

storeContract("store on PGlite", Databases.pglite, { propRuns: 8 })
