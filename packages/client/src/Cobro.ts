/**
 * The Promise client, for programs that do not use Effect: `new Cobro({ apiKey, baseUrl })`, then
 * one namespace per resource (`cobro.links.create`, `cobro.online.intents.create`,
 * `cobro.admin.payments.list`, …). Every call runs the Effect client (`Client`) underneath: the
 * same contract, retries, idempotency keys and timeouts. Arguments are the contract's wire shapes,
 * checked against its schemas before anything is sent; results are its decoded types; failures are
 * thrown as `CobroError` subclasses.
 */
import * as AdminEndpoints from "@cobro/api/AdminEndpoints"
import * as AdminListEndpoints from "@cobro/api/AdminListEndpoints"
import * as AuditEndpoints from "@cobro/api/AuditEndpoints"
import * as Errors from "@cobro/api/Errors"
import * as OnlineEndpoints from "@cobro/api/OnlineEndpoints"
import * as LinkApi from "@cobro/domain/LinkApi"
import * as OnlineApi from "@cobro/domain/OnlineApi"
import * as TerminalApi from "@cobro/domain/TerminalApi"
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import * as HttpClientError from "@effect/platform/HttpClientError"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as Client from "./Client.js"
import * as CobroError from "./CobroError.js"
import * as Pagination from "./Pagination.js"

/**
 * Options of one call.
 *
 * @category models
 */
export interface RequestOptions {
  /** Aborts the call (every attempt and wait); it then throws `CobroAbortError`. */
  readonly signal?: AbortSignal | undefined
  /** The longest one attempt may take, in milliseconds. */
  readonly timeout?: number | undefined
  /** The `Idempotency-Key` to send (default: a new one per call, reused by its retries). */
  readonly idempotencyKey?: string | undefined
  /** Retries after the first attempt, for this call. */
  readonly maxRetries?: number | undefined
}

/**
 * Options of a client: as the Effect client's, with the timeout in milliseconds.
 *
 * @category models
 */
export interface CobroOptions extends Omit<Client.Options, "timeout"> {
  /** The longest one attempt may take, in milliseconds (default 30 000). */
  readonly timeout?: number | undefined
}

type Api = Client.Client
type Encoded<S> = S extends Schema.Schema<infer _A, infer I, never> ? I : never
type Type<S> = S extends Schema.Schema<infer A, infer _I, never> ? A : never

/** Every error of the contract, by its `_tag` (the transport tags the envelope by its status). */
const decodeEnvelopeError = Schema.decodeUnknownEither(
  Schema.Union(
    Errors.BadRequest,
    Errors.Unauthorized,
    Errors.Forbidden,
    Errors.NotFound,
    Errors.MethodNotAllowed,
    Errors.Conflict,
    Errors.PayloadTooLarge,
    Errors.UnsupportedMediaType,
    Errors.InternalServerError,
    Errors.ServiceUnavailable
  )
)

const toCobroError = (error: unknown): Effect.Effect<never, CobroError.CobroError> => {
  if (error instanceof CobroError.CobroError) return Effect.fail(error)
  if (Errors.isEnvelopeError(error)) return Effect.fail(CobroError.fromEnvelopeError(error))
  if (HttpClientError.isHttpClientError(error)) {
    if (error._tag === "RequestError") {
      return Effect.fail(
        error.reason === "Transport"
          ? new CobroError.CobroConnectionError(error.message, { cause: error })
          : new CobroError.CobroInvalidRequestError(error.message, { cause: error })
      )
    }
    // An answer the endpoint does not declare (`HttpApiClient` fails it as a ResponseError): one of
    // the contract's errors all the same (a 503 `Unavailable`, …) when its body is the envelope.
    const status = error.response.status
    return Effect.matchEffect(error.response.json, {
      onFailure: () =>
        Effect.fail(
          status >= 400
            ? new CobroError.CobroUnexpectedResponseError(`unexpected answer ${status}`, {
                status,
                cause: error
              })
            : new CobroError.CobroConnectionError(error.message, { cause: error })
        ),
      onSuccess: (body: any): Effect.Effect<never, CobroError.CobroError> => {
        const contractError = decodeEnvelopeError(body)
        if (contractError._tag === "Right")
          return Effect.fail(CobroError.fromEnvelopeError(contractError.right))
        return Effect.fail(
          new CobroError.CobroUnexpectedResponseError(`unexpected answer ${status}`, {
            status,
            errors: Array.isArray(body?.errors) ? body.errors : [],
            cause: error
          })
        )
      }
    })
  }
  if (ParseResult.isParseError(error)) {
    return Effect.fail(new CobroError.CobroUnexpectedResponseError(error.message, { cause: error }))
  }
  return Effect.fail(new CobroError.CobroError(String(error), { cause: error }))
}

const decoderOf = <A, I>(schema: Schema.Schema<A, I, never>) => {
  const decode = Schema.decodeUnknown(schema, { errors: "all" })
  return (value: I): Effect.Effect<A, CobroError.CobroInvalidRequestError> =>
    Effect.mapError(
      decode(value),
      (error) => new CobroError.CobroInvalidRequestError(error.message, { cause: error })
    )
}

// The contract's request schemas, each decoded once per call before anything is sent.
const checkoutRequest = decoderOf(TerminalApi.CheckoutRequest)
const createLinkRequest = decoderOf(LinkApi.CreateLinkRequest)
const intentCreateRequest = decoderOf(OnlineApi.IntentCreateRequest)
const intentUpdateRequest = decoderOf(OnlineApi.IntentUpdateRequest)
const attemptRequest = decoderOf(OnlineApi.AttemptRequest)
const voidRequest = decoderOf(OnlineApi.VoidRequest)
const refundRequest = decoderOf(OnlineApi.RefundRequest)
const reviewRefundRequest = decoderOf(OnlineEndpoints.ReviewRefundRequest)
const createMerchantRequest = decoderOf(AdminEndpoints.CreateMerchantRequest)
const bindTerminalRequest = decoderOf(AdminEndpoints.BindTerminalRequest)
const patchTerminalRequest = decoderOf(AdminEndpoints.PatchTerminalRequest)
const paymentMethodsRequest = decoderOf(AdminEndpoints.PaymentMethodsRequest)
const webhookRequest = decoderOf(AdminEndpoints.WebhookRequest)
const rotateKeyRequest = decoderOf(AdminEndpoints.RotateKeyRequest)
const merchantStatusRequest = decoderOf(AdminEndpoints.MerchantStatusRequest)
const advanceClockRequest = decoderOf(AdminEndpoints.AdvanceClockRequest)

/** The merchant of a list, and the list's own parameters. */
type MerchantList<P> = { readonly merchant: string } & P

/**
 * The Cobro client for Promise programs.
 *
 * @example
 * ```ts
 * const cobro = new Cobro({ baseUrl: "https://cobro.example", apiKey: process.env.COBRO_KEY })
 * const { payload } = await cobro.links.create({ amount_type: "OPEN" })
 * ```
 *
 * @category clients
 */
export class Cobro {
  /** The Effect client underneath (the same calls, with typed failures). */
  readonly client: Api

  constructor(options: CobroOptions) {
    this.client = Effect.runSync(
      Effect.provide(
        Client.make({
          ...options,
          timeout: options.timeout === undefined ? undefined : `${options.timeout} millis`
        }),
        FetchHttpClient.layer
      )
    )
  }

  /** Runs a call of the Effect client; its failure thrown as a `CobroError`. */
  private run<A, E>(effect: Effect.Effect<A, E>, options: RequestOptions = {}): Promise<A> {
    let sent = false
    const call = effect.pipe(
      // A schema failure before anything was sent is the arguments' (a bigint the JSON encoder
      // cannot write, …); after, the answer's.
      Effect.catchIf(
        (error) => !sent && ParseResult.isParseError(error),
        (error) => Effect.fail(new CobroError.CobroInvalidRequestError(String(error), { cause: error }))
      ),
      Effect.catchAll(toCobroError),
      Client.withCallOptions({
        timeout: options.timeout === undefined ? undefined : `${options.timeout} millis`,
        idempotencyKey: options.idempotencyKey,
        maxRetries: options.maxRetries,
        onSend: () => {
          sent = true
        }
      })
    )
    return Effect.runPromiseExit(
      call,
      options.signal === undefined ? undefined : { signal: options.signal }
    ).then((exit) => {
      if (Exit.isSuccess(exit)) return exit.value
      const failure = Cause.failureOption(exit.cause)
      if (failure._tag === "Some") throw failure.value
      if (Cause.isInterruptedOnly(exit.cause)) {
        throw new CobroError.CobroAbortError("the call was aborted", { cause: options.signal?.reason })
      }
      throw new CobroError.CobroError(Cause.pretty(exit.cause), { cause: Cause.squash(exit.cause) })
    })
  }

  /** The terminal payment API (A1–A3), with the terminal API key. */
  readonly terminal = {
    /** A1: the payment methods of the merchant's terminals. */
    paymentMethods: (options?: RequestOptions) => this.run(this.client.terminal.paymentMethods(), options),
    /** A2: the terminals bound to the merchant. */
    boundTerminals: (options?: RequestOptions) => this.run(this.client.terminal.boundTerminals(), options),
    /** A3: a checkout on a terminal; 201 with `payload.integration_id`. */
    checkout: (body: Encoded<typeof TerminalApi.CheckoutRequest>, options?: RequestOptions) =>
      this.run(
        Effect.flatMap(checkoutRequest(body), (payload) => this.client.terminal.checkout({ payload })),
        options
      )
  }

  /** The fallback notifications query (A4), with the terminal API key. */
  readonly notifications = {
    /**
     * The notification of the last valid state of each matching payment: by transaction id, or by
     * the merchant's reference with `{ is_external_reference: true }`.
     */
    list: (
      paymentId: string,
      query: { readonly is_external_reference?: boolean } = {},
      options?: RequestOptions
    ) =>
      this.run(
        this.client.terminal.notifications({
          path: { payment_id: paymentId },
          urlParams: { is_external_reference: query.is_external_reference ?? false }
        }),
        options
      )
  }

  /** Payment links (B1–B3), with the payment button key. */
  readonly links = {
    /** B1: the link methods the merchant offers, with their bounds. */
    paymentMethods: (options?: RequestOptions) => this.run(this.client.links.paymentMethods(), options),
    /**
     * B2: creates a link; `payload.payment_link` and `payload.url`. An `expiration_date` (exact
     * nanoseconds, a bigint beyond 2^53) cannot be sent yet: `HttpApiClient` writes the payload with
     * `JSON.stringify`, which refuses bigints (a `CobroInvalidRequestError`, nothing sent).
     */
    create: (body: Encoded<typeof LinkApi.CreateLinkRequest>, options?: RequestOptions) =>
      this.run(
        Effect.flatMap(createLinkRequest(body), (payload) => this.client.links.createLink({ payload })),
        options
      ),
    /** B3: the link record. */
    retrieve: (paymentLink: string, options?: RequestOptions) =>
      this.run(this.client.links.readLink({ path: { payment_link: paymentLink } }), options)
  }

  /** Online payments (C1–C9), with the payment button key. */
  readonly online = {
    intents: {
      /** C1: creates an intent. */
      create: (body: Encoded<typeof OnlineApi.IntentCreateRequest>, options?: RequestOptions) =>
        this.run(
          Effect.flatMap(intentCreateRequest(body), (payload) =>
            this.client.online.createIntent({ payload })
          ),
          options
        ),
      /** C2: the intent of a reference. */
      retrieve: (referenceId: string, options?: RequestOptions) =>
        this.run(this.client.online.readIntent({ path: { reference_id: referenceId } }), options),
      /** C3: updates an intent. */
      update: (body: Encoded<typeof OnlineApi.IntentUpdateRequest>, options?: RequestOptions) =>
        this.run(
          Effect.flatMap(intentUpdateRequest(body), (payload) =>
            this.client.online.updateIntent({ payload })
          ),
          options
        )
    },
    payments: {
      /** C4: a payment attempt on an intent (the attempt, or the 3DS redirect). */
      create: (body: Encoded<typeof OnlineApi.AttemptRequest>, options?: RequestOptions) =>
        this.run(
          Effect.flatMap(attemptRequest(body), (payload) => this.client.online.attempt({ payload })),
          options
        ),
      /** The payment of an intent's reference. */
      retrieve: (referenceId: string, options?: RequestOptions) =>
        this.run(this.client.online.readPayment({ path: { reference_id: referenceId } }), options),
      /** Voids a payment. */
      void: (body: Encoded<typeof OnlineApi.VoidRequest>, options?: RequestOptions) =>
        this.run(
          Effect.flatMap(voidRequest(body), (payload) => this.client.online.voidPayment({ payload })),
          options
        )
    },
    refunds: {
      /** Requests a refund. */
      create: (body: Encoded<typeof OnlineApi.RefundRequest>, options?: RequestOptions) =>
        this.run(
          Effect.flatMap(refundRequest(body), (payload) => this.client.online.requestRefund({ payload })),
          options
        ),
      /** The status of a transaction's refund. */
      retrieve: (transactionId: string, options?: RequestOptions) =>
        this.run(this.client.online.refundStatus({ path: { transaction_id: transactionId } }), options)
    },
    /** The PSE banks. */
    banks: (options?: RequestOptions) => this.run(this.client.online.banks(), options)
  }

  /** The public transparency log: checkpoints, the verifier key, proofs. */
  readonly audit = {
    /** The latest signed checkpoint (a C2SP signed note, as text). */
    latestCheckpoint: (options?: RequestOptions) => this.run(this.client.audit.latestCheckpoint(), options),
    /** The checkpoint signed at a tree size. */
    checkpointAt: (treeSize: number, options?: RequestOptions) =>
      this.run(this.client.audit.checkpointAt({ path: { tree_size: treeSize } }), options),
    /** The verifier key checkpoints are signed with. */
    publicKey: (options?: RequestOptions) => this.run(this.client.audit.publicKey(), options),
    /** The consistency proof between two tree sizes. */
    consistencyProof: (params: { readonly from: number; readonly to: number }, options?: RequestOptions) =>
      this.run(this.client.audit.consistencyProof({ urlParams: params }), options),
    /** An event's inclusion proof (admin token). */
    inclusionProof: (params: Type<typeof AuditEndpoints.InclusionParams>, options?: RequestOptions) =>
      this.run(this.client.auditAdmin.inclusionProof({ urlParams: params }), options)
  }

  /** The operator's API, with the admin token. */
  readonly admin = {
    merchants: {
      /** Creates a merchant; the only answer that shows its keys. */
      create: (body: Encoded<typeof AdminEndpoints.CreateMerchantRequest>, options?: RequestOptions) =>
        this.run(
          Effect.flatMap(createMerchantRequest(body), (payload) =>
            this.client.admin.createMerchant({ payload })
          ),
          options
        ),
      /** Enables or disables a merchant's account. */
      setStatus: (
        merchant: string,
        body: Encoded<typeof AdminEndpoints.MerchantStatusRequest>,
        options?: RequestOptions
      ) =>
        this.run(
          Effect.flatMap(merchantStatusRequest(body), (payload) =>
            this.client.admin.setMerchantStatus({ path: { merchant_id: merchant }, payload })
          ),
          options
        ),
      /** Every merchant (by name or status), newest first, for `for await`. */
      list: (
        params: Omit<
          Type<typeof AdminListEndpoints.MerchantsParams>,
          "starting_after" | "ending_before"
        > = {},
        options?: RequestOptions
      ) =>
        Pagination.iterate((cursor) =>
          this.admin.merchants.page(
            {
              ...params,
              ...(cursor === undefined ? {} : { starting_after: cursor })
            },
            options
          )
        ),
      /** One page of merchants. */
      page: (params: Type<typeof AdminListEndpoints.MerchantsParams> = {}, options?: RequestOptions) =>
        this.run(this.client.adminLists.listMerchants({ urlParams: params }), options)
    },
    terminals: {
      /** Binds a terminal to a merchant. */
      bind: (
        merchant: string,
        body: Encoded<typeof AdminEndpoints.BindTerminalRequest>,
        options?: RequestOptions
      ) =>
        this.run(
          Effect.flatMap(bindTerminalRequest(body), (payload) =>
            this.client.admin.bindTerminal({ path: { merchant_id: merchant }, payload })
          ),
          options
        ),
      /** Enables or disables a bound terminal for the API. */
      update: (
        merchant: string,
        serial: string,
        body: Encoded<typeof AdminEndpoints.PatchTerminalRequest>,
        options?: RequestOptions
      ) =>
        this.run(
          Effect.flatMap(patchTerminalRequest(body), (payload) =>
            this.client.admin.patchTerminal({
              path: { merchant_id: merchant, terminal_serial: serial },
              payload
            })
          ),
          options
        )
    },
    /** Sets a merchant's payment methods (each section given replaces that section). */
    setPaymentMethods: (
      merchant: string,
      body: Encoded<typeof AdminEndpoints.PaymentMethodsRequest>,
      options?: RequestOptions
    ) =>
      this.run(
        Effect.flatMap(paymentMethodsRequest(body), (payload) =>
          this.client.admin.setPaymentMethods({ path: { merchant_id: merchant }, payload })
        ),
        options
      ),
    webhooks: {
      /** Registers the merchant's webhook for a mode. */
      set: (
        merchant: string,
        body: Encoded<typeof AdminEndpoints.WebhookRequest>,
        options?: RequestOptions
      ) =>
        this.run(
          Effect.flatMap(webhookRequest(body), (payload) =>
            this.client.admin.setWebhook({ path: { merchant_id: merchant }, payload })
          ),
          options
        ),
      /** Removes the merchant's webhook of a mode. */
      delete: (merchant: string, mode: "test" | "production", options?: RequestOptions) =>
        this.run(
          this.client.admin.deleteWebhook({ path: { merchant_id: merchant }, urlParams: { mode } }),
          options
        )
    },
    keys: {
      /** Rotates a key pair; the old one stops working at once. */
      rotate: (
        merchant: string,
        body: Encoded<typeof AdminEndpoints.RotateKeyRequest>,
        options?: RequestOptions
      ) =>
        this.run(
          Effect.flatMap(rotateKeyRequest(body), (payload) =>
            this.client.admin.rotateKey({ path: { merchant_id: merchant }, payload })
          ),
          options
        )
    },
    /** Advances the sandbox's virtual clock. */
    advanceClock: (body: Encoded<typeof AdminEndpoints.AdvanceClockRequest>, options?: RequestOptions) =>
      this.run(
        Effect.flatMap(advanceClockRequest(body), (payload) => this.client.admin.advanceClock({ payload })),
        options
      ),
    payments: {
      /** Every transaction of a merchant, newest first, for `for await`. */
      list: (
        params: MerchantList<
          Omit<Type<typeof AdminListEndpoints.PaymentsParams>, "starting_after" | "ending_before">
        >,
        options?: RequestOptions
      ) =>
        Pagination.iterate((cursor) =>
          this.admin.payments.page(
            { ...params, ...(cursor === undefined ? {} : { starting_after: cursor }) },
            options
          )
        ),
      /** One page of a merchant's transactions. */
      page: (
        { merchant, ...params }: MerchantList<Type<typeof AdminListEndpoints.PaymentsParams>>,
        options?: RequestOptions
      ) =>
        this.run(
          this.client.adminLists.listPayments({ path: { merchant_id: merchant }, urlParams: params }),
          options
        )
    },
    links: {
      /** Every payment link of a merchant, newest first, for `for await`. */
      list: (
        params: MerchantList<
          Omit<Type<typeof AdminListEndpoints.LinksParams>, "starting_after" | "ending_before">
        >,
        options?: RequestOptions
      ) =>
        Pagination.iterate((cursor) =>
          this.admin.links.page(
            { ...params, ...(cursor === undefined ? {} : { starting_after: cursor }) },
            options
          )
        ),
      /** One page of a merchant's links. */
      page: (
        { merchant, ...params }: MerchantList<Type<typeof AdminListEndpoints.LinksParams>>,
        options?: RequestOptions
      ) =>
        this.run(
          this.client.adminLists.listLinks({ path: { merchant_id: merchant }, urlParams: params }),
          options
        ),
      /** Cancels an ACTIVE link. */
      cancel: (paymentLink: string, options?: RequestOptions) =>
        this.run(this.client.admin.cancelLink({ path: { payment_link: paymentLink } }), options)
    },
    notifications: {
      /** Every webhook notification of a merchant and its delivery, newest first, for `for await`. */
      list: (
        params: MerchantList<
          Omit<Type<typeof AdminListEndpoints.NotificationsParams>, "starting_after" | "ending_before">
        >,
        options?: RequestOptions
      ) =>
        Pagination.iterate((cursor) =>
          this.admin.notifications.page(
            {
              ...params,
              ...(cursor === undefined ? {} : { starting_after: cursor })
            },
            options
          )
        ),
      /** One page of a merchant's notifications. */
      page: (
        { merchant, ...params }: MerchantList<Type<typeof AdminListEndpoints.NotificationsParams>>,
        options?: RequestOptions
      ) =>
        this.run(
          this.client.adminLists.listNotifications({ path: { merchant_id: merchant }, urlParams: params }),
          options
        ),
      /** A notification's delivery and its attempts. */
      attempts: (notificationId: string, options?: RequestOptions) =>
        this.run(
          this.client.admin.listDeliveryAttempts({ path: { notification_id: notificationId } }),
          options
        ),
      /** Sends a notification again. */
      resend: (notificationId: string, options?: RequestOptions) =>
        this.run(this.client.admin.resendNotification({ path: { notification_id: notificationId } }), options)
    },
    refunds: {
      /** Every refund of a merchant, newest first, for `for await`. */
      list: (
        params: MerchantList<
          Omit<Type<typeof AdminListEndpoints.RefundsParams>, "starting_after" | "ending_before">
        >,
        options?: RequestOptions
      ) =>
        Pagination.iterate((cursor) =>
          this.admin.refunds.page(
            { ...params, ...(cursor === undefined ? {} : { starting_after: cursor }) },
            options
          )
        ),
      /** One page of a merchant's refunds. */
      page: (
        { merchant, ...params }: MerchantList<Type<typeof AdminListEndpoints.RefundsParams>>,
        options?: RequestOptions
      ) =>
        this.run(
          this.client.adminLists.listRefunds({ path: { merchant_id: merchant }, urlParams: params }),
          options
        ),
      /** Reviews a transaction's latest refund. */
      review: (
        transactionId: string,
        body: Encoded<typeof OnlineEndpoints.ReviewRefundRequest>,
        options?: RequestOptions
      ) =>
        this.run(
          Effect.flatMap(reviewRefundRequest(body), (payload) =>
            this.client.onlineAdmin.reviewRefund({ path: { transaction_id: transactionId }, payload })
          ),
          options
        )
    },
    events: {
      /** Every event of the log in commit order from `after`, for `for await`. */
      list: (
        { after, ...params }: Type<typeof AdminListEndpoints.EventsParams> = {},
        options?: RequestOptions
      ) =>
        Pagination.iterateEvents(
          (cursor) =>
            this.admin.events.page(
              { ...params, ...(cursor === undefined ? {} : { after: cursor }) },
              options
            ),
          after
        ),
      /** One page of the log. */
      page: (params: Type<typeof AdminListEndpoints.EventsParams> = {}, options?: RequestOptions) =>
        this.run(this.client.adminLists.listEvents({ urlParams: params }), options)
    },
    /** A resource's history: every event with the state after it. */
    history: (streamId: string, options?: RequestOptions) =>
      this.run(this.client.adminLists.streamHistory({ path: { stream_id: streamId } }), options)
  }
}
