// The gateway's API over gRPC-Web (Envoy's grpc_web filter in front of the gateway's gRPC port).
// Message and service types come from ../protos, generated into src/gen by `buf generate`.
import { Code, ConnectError, createClient, type Client, type Interceptor } from "@connectrpc/connect";
import { createGrpcWebTransport } from "@connectrpc/connect-web";
import { Gateway } from "./gen/cardroom/v1/gateway_pb.js";
import { session } from "./session.js";

/** Where the API is: the page's own origin (Envoy serves both), or VITE_CARDROOM_API for `npm run dev`. */
export function apiBaseUrl(): string {
  const configured = import.meta.env.VITE_CARDROOM_API as string | undefined;
  return configured && configured.length > 0 ? configured : window.location.origin;
}

const OPEN = new Set(["Login", "SignUp", "Refresh"]);
let refreshing: Promise<void> | undefined;

/** A new access token for the refresh token when the one held expires within a minute (one at a
 * time: the refresh token is used up by each Refresh). A failed refresh leaves the old token, and
 * the call then fails UNAUTHENTICATED (the page goes back to the log-in). */
async function fresh(): Promise<void> {
  const expires = session.expiresAt();
  const refreshToken = session.refreshToken();
  if (expires === undefined || !refreshToken || expires - Date.now() / 1000 > 60) return;
  refreshing ??= gateway()
    .refresh({ refreshToken })
    .then((login) => session.save(login))
    .catch(() => undefined)
    .finally(() => {
      refreshing = undefined;
    });
  await refreshing;
}

/** Every call but Login / SignUp / Refresh carries the access token (gateway.proto). */
const bearer: Interceptor = (next) => async (request) => {
  if (OPEN.has(request.method.name)) return next(request);
  await fresh();
  const token = session.token();
  if (token) request.header.set("authorization", `Bearer ${token}`);
  return next(request);
};

export type GatewayClient = Client<typeof Gateway>;

let client: GatewayClient | undefined;

export function gateway(): GatewayClient {
  client ??= createClient(
    Gateway,
    createGrpcWebTransport({ baseUrl: apiBaseUrl(), interceptors: [bearer], useBinaryFormat: true }),
  );
  return client;
}

/** The gateway's error in words: the status and its message (the gateway's messages are for people). */
export function describeError(error: unknown): string {
  const err = ConnectError.from(error);
  return err.rawMessage || Code[err.code] || String(err.code);
}

/** An expired or revoked login: the caller goes back to the log-in page. */
export function isUnauthenticated(error: unknown): boolean {
  return ConnectError.from(error).code === Code.Unauthenticated;
}
