// The table test's driver (tests/web/test_web_table.py runs it): Debian's Chromium driven by
// playwright-core through the pages served by Envoy: sign up, open a Hold'em table from the lobby,
// sit down with a buy-in, play HANDS hands against the player the test seats (the first hand the
// player acts in: a raise set with the slider; the next: check or call to the end; the next: fold;
// then check or call), leave, and the lobby's balance. A screenshot of each step goes to
// ARTIFACTS. What the page showed at each decision and after each hand, and every card of another
// seat that ever appeared in the DOM (a MutationObserver), is printed as one JSON object.
//
// ADD_CHIPS=n: after the first hand, n chips added with the add-chips form (the page's message and
// balance after it are recorded). After leaving, the lobby's last hands and their export as
// PokerStars text (the file the export link downloads) are recorded too.
//
// RECONNECT=1: at his first turn after the first hand the driver prints the line DROP and the test
// stops Envoy (the page's stream breaks, its reconnections are refused) and starts it again; what
// the page showed before, while cut off and after it resumed is recorded, then it acts as planned.
//
// POST_NOW=1: the player sits down with "post the big blind now" ticked (the table already running);
// before he sits the driver prints the line SIT and waits for a line on its stdin (the test lets
// him sit when the next hand's button puts his seat where only a player posting now is dealt in).
//
// Stud and draw tables: PLANS=call (check or call, the bring-in when it is his; at each draw the
// first DISCARDS cards clicked and thrown).
//
//   BASE_URL=... PLAYER=... PASSWORD=... TABLE=... BUY_IN=... HANDS=4 ARTIFACTS=dir node e2e/table.mjs
import { join } from "node:path";
import { createInterface } from "node:readline";
import { launchChromium, required } from "./browser.mjs";

const { BASE_URL, PLAYER, PASSWORD, TABLE, BUY_IN, ARTIFACTS } = required(
  "BASE_URL", "PLAYER", "PASSWORD", "TABLE", "BUY_IN", "ARTIFACTS",
);
const HANDS = Number(process.env.HANDS ?? "4");
const PLANS = (process.env.PLANS ?? "raise,call,fold").split(",").filter(Boolean);
const DISCARDS = Number(process.env.DISCARDS ?? "2"); // draw games: cards thrown at each draw
const ADD_CHIPS = process.env.ADD_CHIPS ?? "";
const RECONNECT = process.env.RECONNECT === "1";
const POST_NOW = process.env.POST_NOW === "1";
const browser = await launchChromium();
const seen = { steps: [], console: [], failedRequests: [], decisions: [], hands: [], othersCards: [] };
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
  // What the table page shows now, from its data attributes.
  const read = () =>
    page.evaluate(() => {
      const root = document.querySelector("[data-testid=table-page]");
      const seats = [...document.querySelectorAll("[data-testid=seat]")].map((s) => ({
        seat: Number(s.getAttribute("data-seat")),
        player: s.getAttribute("data-player"),
        stack: s.getAttribute("data-stack"),
        bet: s.getAttribute("data-bet"),
        me: s.getAttribute("data-me") === "true",
        cards: [...s.querySelectorAll(".pcard")].map((c) => c.getAttribute("data-card") ?? "??"),
      }));
      const actions = document.querySelector("[data-testid=actions]");
      return {
        hand: Number(root?.getAttribute("data-hand") ?? "0"),
        inHand: root?.getAttribute("data-in-hand") === "true",
        myTurn: actions?.getAttribute("data-my-turn") === "true" && !actions?.hasAttribute("data-busy"),
        offered: [...document.querySelectorAll("[data-testid=actions] button")].map((b) => b.getAttribute("data-action")),
        seats,
        board: [...document.querySelectorAll("[data-testid=board] .pcard")].map((c) => c.getAttribute("data-card")),
        pot: document.querySelector("[data-testid=pot]")?.getAttribute("data-amount") ?? "",
        results: [...document.querySelectorAll("[data-testid=results] li")].map((li) => li.textContent),
        allCards: [...document.querySelectorAll("[data-card]")].map((c) => c.getAttribute("data-card")),
        balance: document.querySelector("[data-testid=table-balance]")?.getAttribute("data-amount") ?? "",
        message: document.querySelector("[data-testid=message]")?.textContent ?? "",
      };
    });

  await page.goto(`${BASE_URL}/#/signup`);
  await page.locator("[data-testid=signup] input[name=player_id]").fill(PLAYER);
  await page.locator("[data-testid=signup] input[name=password]").fill(PASSWORD);
  await page.locator("[data-testid=signup] button[type=submit]").click();
  await page.locator("[data-testid=balance] li").first().waitFor();
  await shot("lobby");
  await page.locator(`tr[data-table-id="${TABLE}"] [data-testid=open-table]`).click();
  await page.locator("[data-testid=sit] input[name=buy_in]").waitFor();
  seen.buyInLimits = await page.locator("[data-testid=sit] input[name=buy_in]").evaluate((i) => [i.min, i.max]);
  // Every card of another seat that ever enters the page, with the hand it was shown in.
  await page.evaluate(() => {
    window.__othersCards = [];
    const note = (node) => {
      if (!(node instanceof Element)) return;
      for (const card of [node, ...node.querySelectorAll("[data-card]")]) {
        const seat = card.closest?.("[data-testid=seat]");
        if (!card.hasAttribute?.("data-card") || !seat || seat.getAttribute("data-me") === "true") continue;
        const hand = document.querySelector("[data-testid=table-page]")?.getAttribute("data-hand");
        window.__othersCards.push({ hand: Number(hand), seat: Number(seat.getAttribute("data-seat")), card: card.getAttribute("data-card") });
      }
    };
    new MutationObserver((records) => records.forEach((r) => r.addedNodes.forEach(note))).observe(document.body, {
      childList: true,
      subtree: true,
    });
  });
  await shot("table-before-sitting");
  await page.locator("[data-testid=sit] input[name=buy_in]").fill(BUY_IN);
  if (POST_NOW) {
    await page.locator("[data-testid=sit] input[name=post_now]").check();
    const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
    console.log("SIT");
    await lines.next();
  }
  await page.locator("[data-testid=sit] button[type=submit]").click();
  await page.locator("[data-testid=seat][data-me=true]").waitFor();
  seen.afterSitting = await read();
  seen.afterSitting.marks = await page.locator("[data-testid=seat][data-me=true] .marks").textContent();
  seen.afterSitting.postNowButton = await page.locator("[data-testid=post-now]").isVisible();
  await shot("seated");

  // The plans, each for one hand the player acts in, taken off once carried out (a fold waits for
  // a hand where folding is offered); then check or call.
  const pending = [...PLANS];
  const planOf = new Map();
  const ended = new Set();
  const deadline = Date.now() + 360_000;
  while (ended.size < HANDS || pending.length > 0) {
    if (Date.now() > deadline) throw new Error(`only ${ended.size} hands seen in time; plans left: ${pending}`);
    const now = await read();
    if (now.myTurn && RECONNECT && !seen.reconnect && ended.size >= 1) {
      seen.reconnect = { before: now };
      console.log("DROP");
      await page.waitForFunction(() =>
        /Connection lost/.test(document.querySelector("[data-testid=message]")?.textContent ?? ""), null,
      { timeout: 60_000 });
      seen.reconnect.offline = await read();
      await shot(`hand${now.hand}-offline`);
      // resumed: a new session (the message is cleared) and the turn is his again
      await page.waitForFunction(() => {
        const bar = document.querySelector("[data-testid=actions]");
        const text = document.querySelector("[data-testid=message]")?.textContent ?? "";
        return bar?.getAttribute("data-my-turn") === "true" && !/Connection lost/.test(text);
      }, null, { timeout: 60_000 });
      seen.reconnect.after = await read();
      await shot(`hand${now.hand}-reconnected`);
      continue;
    }
    if (now.myTurn) {
      if (!planOf.has(now.hand)) planOf.set(now.hand, pending[0] ?? "call");
      const plan = planOf.get(now.hand);
      const offered = new Set(now.offered);
      const decision = { hand: now.hand, plan, offered: now.offered, seats: now.seats, board: now.board, allCards: now.allCards, pot: now.pot };
      const box = page.locator("[data-testid=bet-amount]");
      if (await box.count()) {
        decision.box = await box.evaluate((b) => ({ min: b.min, max: b.max, readOnly: b.readOnly }));
      }
      let click;
      if (offered.has("draw")) {
        // click the cards to throw, the button then says how many
        const mine = page.locator("[data-testid=seat][data-me=true] .pcard.pick");
        const picked = [];
        for (let i = 0; i < Math.min(DISCARDS, await mine.count()); i += 1) {
          picked.push(await mine.nth(i).getAttribute("data-card"));
          await mine.nth(i).click();
        }
        decision.discards = picked;
        decision.drawLabel = await page.locator("[data-testid=actions] button[data-action=draw]").textContent();
        click = "draw";
      } else if (plan === "raise" && (offered.has("raise") || offered.has("bet"))) {
        click = offered.has("raise") ? "raise" : "bet";
        // the slider, then the box must show the same amount
        const slider = page.locator("[data-testid=bet-slider]");
        const [min, max] = await slider.evaluate((s) => [Number(s.min), Number(s.max)]);
        const target = Math.min(max, min + 10);
        await slider.evaluate((s, v) => {
          s.value = String(v);
          s.dispatchEvent(new Event("input", { bubbles: true }));
        }, target);
        decision.slider = { min, max, target, box: Number(await page.locator("[data-testid=bet-amount]").inputValue()) };
        planOf.set(now.hand, "raised"); // one raise a hand, then check or call
        pending.shift();
      } else if (plan === "fold" && offered.has("fold")) {
        click = "fold";
        pending.shift();
      } else {
        click = offered.has("check") ? "check" : offered.has("call") ? "call" : "bring-in";
        if (plan === "call" && pending[0] === "call") {
          pending.shift();
          planOf.set(now.hand, "call-done");
        }
      }
      decision.action = click;
      await shot(`hand${now.hand}-${click}`);
      const turnKey = await page.locator("[data-testid=actions]").getAttribute("data-turn");
      await page.locator(`[data-testid=actions] button[data-action=${click}]`).click();
      try {
        // the turn is over (or the next one came already), or the action was refused
        await page.waitForFunction((key) => {
          const bar = document.querySelector("[data-testid=actions]");
          return bar?.getAttribute("data-my-turn") !== "true" || bar?.getAttribute("data-turn") !== key
            || document.querySelector("[data-testid=message]")?.getAttribute("role") === "alert";
        }, turnKey);
      } catch (error) {
        decision.stuck = await read();
        seen.decisions.push(decision);
        throw error;
      }
      const after = await read();
      if (after.message && after.myTurn) decision.refused = after.message;
      seen.decisions.push(decision);
      continue;
    }
    const mine = now.seats.find((s) => s.me);
    if (!now.inHand && now.hand > 0 && now.results.length > 0 && !ended.has(now.hand) && mine) {
      ended.add(now.hand);
      seen.hands.push({ hand: now.hand, seats: now.seats, results: now.results, board: now.board, pot: now.pot, balance: now.balance });
      await shot(`hand${now.hand}-result`);
      if (ADD_CHIPS && !seen.addChips) {
        const form = page.locator("[data-testid=add-chips]");
        const input = form.locator("input[name=amount]");
        seen.addChips = { amount: ADD_CHIPS, max: await input.getAttribute("max"), stackBefore: mine.stack };
        await input.fill(ADD_CHIPS);
        await form.locator("button[type=submit]").click();
        await page.waitForFunction(() => /added|alert/.test(
          `${document.querySelector("[data-testid=message]")?.textContent} ${document.querySelector("[data-testid=message]")?.getAttribute("role")}`,
        ));
        // the balance line follows the wallet
        await page.waitForFunction((before) =>
          document.querySelector("[data-testid=table-balance]")?.getAttribute("data-amount") !== before, now.balance);
        const after = await read();
        seen.addChips.message = after.message;
        seen.addChips.balance = after.balance;
        seen.addChips.stackAfter = after.seats.find((s) => s.me)?.stack;
        seen.addChips.maxAfter = await form.locator("input[name=amount]").count()
          ? await form.locator("input[name=amount]").getAttribute("max") : null;
        await shot("chips-added");
      }
      continue;
    }
    await page.waitForTimeout(100);
  }
  seen.othersCards = await page.evaluate(() => window.__othersCards);
  seen.beforeLeaving = await read();
  await page.locator("[data-testid=leave]").click();
  await page.locator("[data-testid=balance] li").first().waitFor({ timeout: 60_000 });
  await shot("lobby-after-leaving");
  seen.lobbyBalance = await page.evaluate(() =>
    [...document.querySelectorAll("[data-testid=balance] li")].map((li) => ({
      currency: li.getAttribute("data-currency"),
      amount: li.getAttribute("data-amount"),
    })),
  );
  // The table's lobby figures (the last hour's average pot and hands per hour).
  seen.lobbyTable = await page.evaluate((table) => {
    const row = document.querySelector(`tr[data-table-id="${table}"]`);
    return row && {
      averagePot: row.querySelector(".average-pot")?.getAttribute("data-amount"),
      averagePotText: row.querySelector(".average-pot")?.textContent,
      handsPerHour: row.querySelector(".hands-per-hour")?.getAttribute("data-rate"),
      hands: row.querySelector(".hands")?.textContent,
    };
  }, TABLE);
  // The last hands and their export: what the link downloads.
  await page.locator("[data-testid=history]").waitFor();
  seen.history = await page.evaluate(async () => {
    const link = document.querySelector("[data-testid=export-pokerstars]");
    return {
      hands: [...document.querySelectorAll("[data-testid=history] tbody tr")].map((row) => ({
        handId: row.getAttribute("data-hand-id"),
        tableId: row.getAttribute("data-table-id"),
        net: row.getAttribute("data-net"),
        hand: row.querySelector(".hand")?.textContent ?? "",
        cards: row.querySelector(".cards")?.textContent ?? "",
      })),
      fileName: link?.getAttribute("download") ?? null,
      exported: link ? await (await fetch(link.getAttribute("href"))).text() : null,
    };
  });
  await page.locator("[data-testid=history] details summary").click();
  await shot("lobby-history");
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
