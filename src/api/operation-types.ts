/**
 * Types of the client's calls, derived from the openapi-typescript output of the platform
 * description (`generated/platform.ts`), so a call cannot drift from the description: an
 * unknown operation id, a missing path parameter or a wrong body field fails to compile.
 *
 * The helpers take the `operations` map as a parameter (`Ops`) so they can be checked on a
 * small sample too; the bottom of the file binds them to the platform's map.
 */
import type { operations } from './generated/platform.js';

/** The type with no members: the part an operation does not have. */
type Empty = Record<never, never>;
type Defined<T> = Exclude<T, undefined>;
/** `Empty` for a part the operation does not have (`path?: never`). */
type PartOf<T> = [Defined<T>] extends [never] ? Empty : Defined<T>;

type ParametersOf<Op> = Op extends { parameters: infer P } ? P : Empty;
type PathOf<Op> = ParametersOf<Op> extends { path?: infer P } ? PartOf<P> : Empty;
type QueryOf<Op> = ParametersOf<Op> extends { query?: infer Q } ? PartOf<Q> : Empty;
type ContentOf<T> = T extends { content: infer C } ? C[keyof C] : never;
type BodyOf<Op> = Op extends { requestBody: infer B }
  ? [Defined<B>] extends [never]
    ? Empty
    : { body: ContentOf<Defined<B>> }
  : Op extends { requestBody?: infer B }
    ? [Defined<B>] extends [never]
      ? Empty
      : { body?: ContentOf<Defined<B>> }
    : Empty;

/** A call's input: path and query parameters by name, plus `body`. */
export type InputOf<Ops, K extends keyof Ops> = PathOf<Ops[K]> & QueryOf<Ops[K]> & BodyOf<Ops[K]>;

type SuccessStatus = 200 | 201 | 202 | 203 | 204 | 206;
type ResponseContent<R> = R extends { content: infer C }
  ? [Defined<C>] extends [never]
    ? undefined
    : Defined<C>[keyof Defined<C>]
  : undefined;
/** The body of any success answer of the operation; `undefined` for answers without content. */
export type ResponseBodyOf<Ops, K extends keyof Ops> = Ops[K] extends { responses: infer R }
  ? { [S in keyof R]: S extends SuccessStatus ? ResponseContent<R[S]> : never }[keyof R]
  : unknown;

/** Arguments after the operation id: the input may be left out when nothing in it is required. */
export type InputArgs<I, O> = Empty extends I ? [input?: I, options?: O] : [input: I, options?: O];

/** `area` of `area.verbNoun`. */
export type AreaOf<K> = K extends `${infer A}.${string}` ? A : never;

/** Operations the client calls; the token endpoint is the client's own business (its answer is a credential). */
export type CallableIdOf<Ops> = Exclude<keyof Ops & string, `auth.${string}`>;

/** `client.<area>.<verbNoun>(input, options)` for every callable operation. */
export type AreaMethodsOf<Ops, O, R extends Record<string, unknown>> = {
  [A in AreaOf<CallableIdOf<Ops>>]: {
    [K in CallableIdOf<Ops> as K extends `${A}.${infer M}` ? M : never]: (
      ...args: InputArgs<InputOf<Ops, K>, O>
    ) => Promise<R & { body: ResponseBodyOf<Ops, K> }>;
  };
};

/** Every operation id of the platform description the client can call. */
export type OperationId = CallableIdOf<operations>;
export type OperationInput<K extends OperationId> = InputOf<operations, K>;
export type OperationResponseBody<K extends OperationId> = ResponseBodyOf<operations, K>;
export type PlatformArea = AreaOf<OperationId>;
/** Items of a list operation's answer: the envelope's `items`, or the bare array's elements. */
export type ListItemOf<K extends OperationId> =
  OperationResponseBody<K> extends { items?: Array<infer I> }
    ? I
    : OperationResponseBody<K> extends Array<infer I>
      ? I
      : unknown;
