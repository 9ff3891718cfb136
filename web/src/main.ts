// The pages are hash routes (#/login, #/signup, #/lobby, #/table/<table id>, #/tournament/<tournament
// id>: his table in that tournament), so the static build is
// one index.html.
import "./style.css";
import { h } from "./dom.js";
import { logInPage, signUpPage } from "./pages/auth.js";
import { lobbyPage } from "./pages/lobby.js";
import { tablePage } from "./pages/table.js";
import { tournamentTablePage } from "./pages/tournament-table.js";
import { session } from "./session.js";

type Page = (root: HTMLElement, go: (route: string) => void) => void | Promise<void>;

const PAGES: Record<string, Page> = {
  "#/signup": signUpPage,
  "#/login": logInPage,
  "#/lobby": lobbyPage,
};

const root = document.getElementById("app") as HTMLElement;
const nav = document.getElementById("nav") as HTMLElement;

function go(route: string): void {
  if (window.location.hash === route) void show();
  else window.location.hash = route;
}

function drawNav(): void {
  const playerId = session.playerId();
  if (!playerId) {
    nav.replaceChildren(h("a", { href: "#/login" }, "Log in"), " ", h("a", { href: "#/signup" }, "Sign up"));
    return;
  }
  const logOut = h("button", { type: "button", "data-testid": "logout" }, "Log out");
  logOut.addEventListener("click", () => {
    session.clear();
    go("#/login");
  });
  nav.replaceChildren(h("span", { "data-testid": "player" }, playerId), " ", logOut);
}

async function show(): Promise<void> {
  const hash = window.location.hash;
  drawNav();
  if (hash.startsWith("#/table/")) {
    void tablePage(root, go, decodeURIComponent(hash.slice("#/table/".length))); // runs while the table is open
    return;
  }
  if (hash.startsWith("#/tournament/")) {
    void tournamentTablePage(root, go, decodeURIComponent(hash.slice("#/tournament/".length))); // follows him
    return;
  }
  const page = PAGES[hash] ?? (session.token() ? lobbyPage : logInPage);
  await page(root, go);
  drawNav();
}

window.addEventListener("hashchange", () => void show());
void show();
