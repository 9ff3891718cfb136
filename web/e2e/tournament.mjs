// The tournament test's driver (tests/web/test_web_tournament.py runs it): Debian's Chromium driven
// by playwright-core through the pages served by Envoy. The player (signed up and funded by the test)
// logs in, finds the Sit & Go TOURNAMENT in the lobby (status, entrants, buy-in + fee, prize pool,
// level and blinds), opens its details and registers; once it runs (the lobby refreshed) he opens his
// table from the details ("Open my table": #/tournament/<id>) and plays HANDS hands there (check when
// he may, one call, else fold), then goes back to the lobby. What the pages showed — at each decision
// every card in the page and each seat's cards, after each hand the stacks and results — is printed
// as one JSON object; a screenshot of each step goes to ARTIFACTS.
//
//   BASE_URL=... PLAYER=... PASSWORD=... TOURNAMENT=... HANDS=3 ARTIFACTS=dir node e2e/tournament.mjs
import { join } from "node:path";
import { launchChromium, required } from "./browser.mjs";

const { BASE_URL, PLAYER, PASSWORD, TOURNAMENT, ARTIFACTS } = required(
  "BASE_URL", "PLAYER", "PASSWORD", "TOURNAMENT", "ARTIFACTS",
);
const HANDS = Number(process.env.HANDS ?? "3");
const browser = await launchChromium();
const seen = { steps: [], console: [], failedRequests: [], decisions: [], hands: [] };
let step = 0;
try {
  const page = await browser.newPage({ viewport: { width: 1200, height: 950 } });
  page.setDefaultTimeout(30_000);
  page.on("console", (m) => seen.console.push(`${m.type()}: ${m.text()}`));
  page.on("requestfailed", (r) => {
    // the table's stream is cancelled when the page goes back to the lobby: not a failure
    if (!r.url().endsWith("/WatchMyTable")) seen.failedRequests.push(`${r.url()}: ${r.failure()?.errorText}`);
  });
  const shot = async (name) => {
    step += 1;
    const path = join(ARTIFACTS, `${String(step).padStart(2, "0")}-${name}.png`);
    await page.screenshot({ path, fullPage: true });
    seen.steps.push({ name, path });
  };
  const row = () =>
    page.evaluate((id) => {
      const tr = document.querySelector(`[data-testid=tournament-list] tr[data-tournament-id="${id}"]`);
      return tr && {
        status: tr.getAttribute("data-status"),
        entrants: tr.getAttribute("data-entrants"),
        prizePool: tr.getAttribute("data-prize-pool"),
        cells: Object.fromEntries([...tr.querySelectorAll("td[class]")].map((td) => [td.className, td.textContent])),
        nextLevelDeadline: tr.querySelector(".next-level")?.getAttribute("data-deadline") ?? null,
      };
    }, TOURNAMENT);
  const details = () =>
    page.evaluate(() => {
      const dl = document.querySelector("[data-testid=tournament] dl");
      return dl && {
        tournamentId: dl.getAttribute("data-tournament-id"),
        ...Object.fromEntries([...dl.querySelectorAll("dd")].map((dd) => [dd.getAttribute("data-field"), dd.textContent])),
        buttons: [...document.querySelectorAll("[data-testid=tournament] button, [data-testid=tournament] a")].map((b) => b.getAttribute("data-testid")),
      };
    });
  // What the tournament's table page shows now, from its data attributes.
  const read = () =>
    page.evaluate(() => {
      const root = document.querySelector("[data-testid=table-page]");
      const seats = [...document.querySelectorAll("[data-testid=seat]")].map((s) => ({
        seat: Number(s.getAttribute("data-seat")),
        player: s.getAttribute("data-player"),
        stack: s.getAttribute("data-stack"),
        me: s.getAttribute("data-me") === "true",
        cards: [...s.querySelectorAll(".pcard")].map((c) => c.getAttribute("data-card") ?? "??"),
      }));
      const actions = document.querySelector("[data-testid=actions]");
      const banner = document.querySelector("[data-testid=tournament-banner]");
      return {
        tableId: root?.getAttribute("data-table-id") ?? "",
        hand: Number(root?.getAttribute("data-hand") ?? "0"),
        inHand: root?.getAttribute("data-in-hand") === "true",
        myTurn: actions?.getAttribute("data-my-turn") === "true" && !actions?.hasAttribute("data-busy"),
        offered: [...document.querySelectorAll("[data-testid=actions] button")].map((b) => b.getAttribute("data-action")),
        seats,
        board: [...document.querySelectorAll("[data-testid=board] .pcard")].map((c) => c.getAttribute("data-card")),
        pot: document.querySelector("[data-testid=pot]")?.getAttribute("data-amount") ?? "",
        results: [...document.querySelectorAll("[data-testid=results] li")].map((li) => li.textContent),
        allCards: [...document.querySelectorAll("[data-card]")].map((c) => c.getAttribute("data-card")),
        message: document.querySelector("[data-testid=message]")?.textContent ?? "",
        banner: banner && {
          text: banner.textContent,
          status: banner.getAttribute("data-status"),
          table: banner.getAttribute("data-table"),
          chips: banner.getAttribute("data-chips"),
        },
        out: document.querySelector("[data-testid=tournament-result]")?.textContent ?? null,
      };
    });

  await page.goto(`${BASE_URL}/#/login`);
  await page.locator("[data-testid=login] input[name=player_id]").fill(PLAYER);
  await page.locator("[data-testid=login] input[name=password]").fill(PASSWORD);
  await page.locator("[data-testid=login] button[type=submit]").click();
  const tr = page.locator(`[data-testid=tournament-list] tr[data-tournament-id="${TOURNAMENT}"]`);
  await tr.waitFor();
  seen.lobbyBefore = await row();
  await shot("lobby");
  await tr.locator("[data-testid=tournament-details]").click();
  await page.locator(`[data-testid=tournament] dl[data-tournament-id="${TOURNAMENT}"]`).waitFor();
  seen.detailsBefore = await details();
  await shot("tournament-details");
  await page.locator("[data-testid=register]").click();
  await page.waitForFunction(() => /Registered|alert/.test(
    `${document.querySelector("[data-testid=message]")?.textContent} ${document.querySelector("[data-testid=message]")?.getAttribute("role")}`,
  ));
  seen.registered = { message: await page.locator("[data-testid=message]").textContent(), details: await details() };
  await shot("tournament-registered");

  // The sixth entrant: the Sit & Go starts. The lobby is refreshed until his table can be opened and
  // his status names it (the service names it once the dealer has seated him there).
  const link = page.locator("[data-testid=open-tournament-table]");
  const until = Date.now() + 120_000;
  while (!(await link.count()) || !/at table/.test((await details()).mine ?? "")) {
    if (Date.now() > until) throw new Error(`the tournament did not start: ${JSON.stringify(await details())}`);
    await page.waitForTimeout(1500);
    await page.locator("[data-testid=refresh]").click();
    await page.locator(`[data-testid=tournament] dl[data-tournament-id="${TOURNAMENT}"]`).waitFor();
  }
  seen.lobbyRunning = await row();
  seen.detailsRunning = await details();
  await shot("tournament-running");

  await link.click();
  await page.locator("[data-testid=table-page][data-tournament=true]").waitFor();
  await page.locator("[data-testid=seat][data-me=true]").waitFor();
  seen.table = {
    ...(await read()),
    url: page.url(),
    sitForms: await page.locator("[data-testid=sit]:visible, [data-testid=add-chips]:visible").count(),
    leaveButtons: await page.locator("[data-testid=leave], [data-testid=sit-out], [data-testid=post-now]").count(),
    balanceLines: await page.locator("[data-testid=table-balance]").count(),
  };
  await shot("tournament-table");

  const first = seen.table.hand + (seen.table.inHand ? 1 : 0); // hands dealt while the page watched
  const ended = new Set();
  let called = false;
  const deadline = Date.now() + 300_000;
  while (ended.size < HANDS) {
    if (Date.now() > deadline) throw new Error(`only ${ended.size} hands seen in time`);
    const now = await read();
    if (now.out !== null) {
      seen.out = now;
      await shot("tournament-out");
      break;
    }
    if (now.myTurn) {
      const offered = new Set(now.offered);
      let click = "fold";
      if (offered.has("check")) click = "check";
      else if (!called && offered.has("call")) {
        click = "call";
        called = true;
      }
      const mine = now.seats.find((s) => s.me);
      seen.decisions.push({ hand: now.hand, action: click, offered: now.offered, seats: now.seats, board: now.board, allCards: now.allCards, myCards: mine?.cards ?? [] });
      await shot(`hand${now.hand}-${click}`);
      const turnKey = await page.locator("[data-testid=actions]").getAttribute("data-turn");
      await page.locator(`[data-testid=actions] button[data-action=${click}]`).click();
      await page.waitForFunction((key) => {
        const bar = document.querySelector("[data-testid=actions]");
        return bar?.getAttribute("data-my-turn") !== "true" || bar?.getAttribute("data-turn") !== key
          || document.querySelector("[data-testid=message]")?.getAttribute("role") === "alert";
      }, turnKey);
      const after = await read();
      if (after.message && after.myTurn) seen.decisions.at(-1).refused = after.message;
      continue;
    }
    if (!now.inHand && now.hand >= first && now.results.length > 0 && !ended.has(now.hand)) {
      ended.add(now.hand);
      seen.hands.push({ hand: now.hand, tableId: now.tableId, seats: now.seats, results: now.results, banner: now.banner });
      await shot(`hand${now.hand}-result`);
      continue;
    }
    await page.waitForTimeout(100);
  }
  seen.afterHands = await read();
  if (seen.out === undefined) {
    await page.locator("[data-testid=to-lobby]").click();
    await tr.waitFor();
    seen.lobbyAfter = await row();
    seen.balances = await page.evaluate(() =>
      [...document.querySelectorAll("[data-testid=balance] li")].map((li) => ({
        currency: li.getAttribute("data-currency"),
        amount: li.getAttribute("data-amount"),
      })),
    );
    await shot("lobby-after");
  }
} catch (error) {
  seen.error = String(error?.stack ?? error);
  try {
    const pages = browser.contexts().flatMap((c) => c.pages());
    if (pages[0]) await pages[0].screenshot({ path: join(ARTIFACTS, "zz-error.png"), fullPage: true });
  } catch {
    // the error is reported already
  }
} finally {
  await browser.close();
}
console.log(JSON.stringify(seen));
process.exit(seen.error ? 1 : 0);
