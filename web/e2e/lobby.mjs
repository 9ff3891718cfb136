// The browser test's driver (tests/web/test_web_client.py runs it): Debian's Chromium driven by
// playwright-core (never Playwright's own browser download) through the real pages served by
// Envoy: sign up, log out, a wrong password, log in, the lobby and the balance; the tournaments in
// the lobby, and one (TOURNAMENT) registered for from its details and unregistered again. A screenshot of
// each step goes to ARTIFACTS; what the pages showed is printed as one JSON object for the Python
// test to check against the wallet and the dealer.
//
//   BASE_URL=http://127.0.0.1:8080 PLAYER=alice PASSWORD=... ARTIFACTS=dir node e2e/lobby.mjs
import { join } from "node:path";
import { launchChromium, required } from "./browser.mjs";

const { BASE_URL, PLAYER, PASSWORD, ARTIFACTS } = required("BASE_URL", "PLAYER", "PASSWORD", "ARTIFACTS");
const browser = await launchChromium();
const seen = { steps: [], console: [], failedRequests: [] };
let step = 0;
try {
  const page = await browser.newPage({ viewport: { width: 1100, height: 800 } });
  page.setDefaultTimeout(20_000);
  page.on("console", (m) => seen.console.push(`${m.type()}: ${m.text()}`));
  page.on("requestfailed", (r) => seen.failedRequests.push(`${r.url()}: ${r.failure()?.errorText}`));
  const shot = async (name) => {
    step += 1;
    const path = join(ARTIFACTS, `${String(step).padStart(2, "0")}-${name}.png`);
    await page.screenshot({ path, fullPage: true });
    seen.steps.push({ name, path, url: page.url() });
  };
  const lobby = async () => {
    await page.locator("[data-testid=lobby]").waitFor();
    await page.locator("[data-testid=balance] li").first().waitFor();
    return page.evaluate(() => ({
      heading: document.querySelector("h1")?.textContent ?? "",
      player: document.querySelector("[data-testid=player]")?.textContent ?? "",
      games: [...document.querySelectorAll("[data-game]")].map((g) => ({
        variant: g.getAttribute("data-game"),
        title: g.querySelector("h3")?.textContent ?? "",
        tables: [...g.querySelectorAll("tbody tr")].map((row) => ({
          tableId: row.getAttribute("data-table-id"),
          name: row.querySelector(".name")?.textContent ?? "",
          stakes: row.querySelector(".stakes")?.textContent ?? "",
          currency: row.querySelector(".currency")?.textContent ?? "",
          seats: row.querySelector(".seats")?.textContent ?? "",
          buyIn: row.querySelector(".buy-in")?.textContent ?? "",
        })),
      })),
      balances: [...document.querySelectorAll("[data-testid=balance] li")].map((li) => ({
        currency: li.getAttribute("data-currency"),
        amount: li.getAttribute("data-amount"),
        text: li.querySelector(".amount")?.textContent ?? "",
      })),
    }));
  };
  const fill = async (form, player, password) => {
    await page.locator(`[data-testid=${form}] input[name=player_id]`).fill(player);
    await page.locator(`[data-testid=${form}] input[name=password]`).fill(password);
    await page.locator(`[data-testid=${form}] button[type=submit]`).click();
  };

  await page.goto(`${BASE_URL}/#/signup`);
  await page.locator("[data-testid=signup]").waitFor();
  await shot("signup");
  // The form checks the gateway's player id rule before sending anything.
  const id = page.locator("[data-testid=signup] input[name=player_id]");
  await id.fill("-not an id");
  seen.badIdRefusedByForm = await id.evaluate((input) => input.validity.patternMismatch);
  await id.fill(PLAYER);
  seen.goodIdAcceptedByForm = await id.evaluate((input) => input.validity.valid);
  await fill("signup", PLAYER, PASSWORD);
  seen.afterSignUp = await lobby();
  await shot("lobby-after-signup");

  await page.locator("[data-testid=logout]").click();
  await page.locator("[data-testid=login]").waitFor();
  await shot("logged-out");
  await fill("login", PLAYER, `${PASSWORD}-wrong`);
  await page.locator("[data-testid=login] [role=alert]").waitFor();
  seen.wrongPassword = await page.locator("[data-testid=login] [role=alert]").textContent();
  seen.urlAfterWrongPassword = page.url();
  await shot("login-wrong-password");

  await fill("login", PLAYER, PASSWORD);
  seen.afterLogIn = await lobby();
  await shot("lobby-after-login");

  // The tournaments: the list, then one's details, register and unregister.
  const tournaments = () =>
    page.evaluate(() =>
      [...document.querySelectorAll("[data-testid=tournament-list] tbody tr")].map((row) => ({
        tournamentId: row.getAttribute("data-tournament-id"),
        status: row.getAttribute("data-status"),
        entrants: row.getAttribute("data-entrants"),
        prizePool: row.getAttribute("data-prize-pool"),
        cells: [...row.querySelectorAll("td")].map((td) => td.textContent).slice(0, 7),
      })),
    );
  const details = () =>
    page.evaluate(() => {
      const dl = document.querySelector("[data-testid=tournament] dl");
      return dl && {
        tournamentId: dl.getAttribute("data-tournament-id"),
        ...Object.fromEntries([...dl.querySelectorAll("dd")].map((dd) => [dd.getAttribute("data-field"), dd.textContent])),
        buttons: [...document.querySelectorAll("[data-testid=tournament] button")].map((b) => b.getAttribute("data-testid")),
      };
    });
  const TOURNAMENT = process.env.TOURNAMENT;
  if (TOURNAMENT) {
    const row = page.locator(`tr[data-tournament-id="${TOURNAMENT}"]`);
    await row.waitFor();
    seen.tournaments = await tournaments();
    await row.locator("[data-testid=tournament-details]").click();
    await page.locator(`[data-testid=tournament] dl[data-tournament-id="${TOURNAMENT}"]`).waitFor();
    seen.tournamentBefore = await details();
    await shot("tournament-details");
    await page.locator("[data-testid=register]").click();
    await page.locator("[data-testid=unregister]").waitFor();
    seen.registered = { message: await page.locator("[data-testid=message]").textContent(), details: await details(), row: (await tournaments()).find((t) => t.tournamentId === TOURNAMENT) };
    await shot("tournament-registered");
    await page.locator("[data-testid=unregister]").click();
    await page.locator("[data-testid=register]").waitFor();
    seen.unregistered = { message: await page.locator("[data-testid=message]").textContent(), details: await details(), row: (await tournaments()).find((t) => t.tournamentId === TOURNAMENT) };
    await shot("tournament-unregistered");
  }
} catch (error) {
  seen.error = String(error?.stack ?? error);
} finally {
  await browser.close();
}
console.log(JSON.stringify(seen));
process.exit(seen.error ? 1 : 0);
