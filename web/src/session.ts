// The logged-in player's tokens, kept for the tab (sessionStorage): a reload stays logged in, a
// new tab logs in again. The access token is refreshed before it expires (api.ts).
import type { LoginResponse } from "./gen/cardroom/v1/gateway_pb.js";

const KEY = "cardroom.session";

interface Stored {
  playerId: string;
  token: string;
  refreshToken: string;
}

function load(): Stored | undefined {
  const raw = window.sessionStorage.getItem(KEY);
  return raw ? (JSON.parse(raw) as Stored) : undefined;
}

export const session = {
  token(): string | undefined {
    return load()?.token;
  },
  refreshToken(): string | undefined {
    return load()?.refreshToken;
  },
  /** When the access token expires (unix seconds; tokens are "cr1.<player id>.<expiry>.<signature>"). */
  expiresAt(): number | undefined {
    const expiry = Number(load()?.token.split(".")[2]);
    return Number.isFinite(expiry) ? expiry : undefined;
  },
  playerId(): string | undefined {
    return load()?.playerId;
  },
  save(login: LoginResponse): void {
    const stored: Stored = { playerId: login.playerId, token: login.token, refreshToken: login.refreshToken };
    window.sessionStorage.setItem(KEY, JSON.stringify(stored));
  },
  clear(): void {
    window.sessionStorage.removeItem(KEY);
  },
};
