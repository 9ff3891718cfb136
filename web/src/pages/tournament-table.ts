// The player's table in his tournament (#/tournament/<id>): MyTournamentStatus names his table
// (number and the dealer's table id, as the service gives it), and the table is the shared table view
// (pages/table.ts) with no buy-in, chips to add or leaving. The page follows the player: when the
// table says he left it (moved, busted) or it closed, or the status (looked up every few seconds)
// names another table, the new table is opened. Above the table: his status, chips and place, the
// level, its blinds and the time to the next level (GetTournament). Once he is out or the tournament
// is over, his place and prize.
import { describeError, gateway, isUnauthenticated } from "../api.js";
import { h } from "../dom.js";
import type { TournamentInfo, TournamentPlayerStatus } from "../gen/cardroom/v1/tournament_pb.js";
import { TournamentStatus } from "../gen/cardroom/v1/tournament_pb.js";
import { session } from "../session.js";
import { blindsText, clockText, placeText, prizeText, statusName } from "./tournaments.js";
import { tablePage } from "./table.js";

const POLL_MS = 3000;
/** His status once he is out, or the tournament over (MyTournamentStatus.status). */
const DONE = new Set(["busted", "eliminated", "finished"]);

function bannerText(info: TournamentInfo | undefined, mine: TournamentPlayerStatus): Node[] {
  const parts: Node[] = [h("strong", {}, info?.name || mine.tournamentId)];
  const where = mine.table > 0 ? `table ${mine.table}, seat ${mine.seat}` : "no table yet";
  parts.push(
    h("span", { "data-field": "mine" }, ` — you: ${mine.status}, ${where}, ${mine.chips.toString()} chips`),
  );
  if (info) {
    const level = info.level > 0 ? `level ${info.level} (${blindsText(info.blinds)})` : "not started";
    parts.push(h("span", { "data-field": "level" }, ` — ${level}`));
    if (info.onBreak) parts.push(h("span", { "data-field": "break" }, " — on a break"));
    else if (info.level > 0)
      parts.push(
        h(
          "span",
          { "data-field": "next-level", "data-deadline": String(Date.now() + info.secondsToNextLevel * 1000) },
          ` — next level in ${clockText(info.secondsToNextLevel)}`,
        ),
      );
    parts.push(h("span", { "data-field": "remaining" }, ` — ${info.remaining}/${info.entrants} left`));
  }
  return parts;
}

export async function tournamentTablePage(
  root: HTMLElement,
  go: (route: string) => void,
  tournamentId: string,
): Promise<void> {
  if (!session.token()) return go("#/login");
  const route = window.location.hash;
  const here = (): boolean => window.location.hash === route;
  const banner = h("p", { class: "tournament-banner", "data-testid": "tournament-banner", "data-tournament-id": tournamentId });
  let open = ""; // the table id shown
  let closer: AbortController | undefined;
  let left: Promise<unknown> | undefined; // settles when the open table page returns
  const wait = (ms: number): Promise<unknown> =>
    Promise.race([new Promise((resolve) => window.setTimeout(resolve, ms)), left ?? new Promise(() => undefined)]);

  const show = (...children: Node[]): void => {
    closer?.abort();
    open = "";
    left = undefined;
    root.replaceChildren(
      h(
        "div",
        { class: "tournament-page", "data-testid": "tournament-page", "data-tournament-id": tournamentId },
        banner,
        ...children,
        h("p", {}, h("a", { href: "#/lobby" }, "Back to the lobby")),
      ),
    );
  };

  while (here()) {
    let mine: TournamentPlayerStatus;
    let info: TournamentInfo | undefined;
    try {
      [mine, info] = await Promise.all([
        gateway().myTournamentStatus({ tournamentId }),
        gateway()
          .getTournament({ tournamentId })
          .catch(() => undefined),
      ]);
    } catch (error) {
      if (!here()) return;
      if (isUnauthenticated(error)) {
        session.clear();
        return go("#/login");
      }
      show(h("p", { class: "error", role: "alert", "data-testid": "message" }, describeError(error)));
      return;
    }
    if (!here()) return;
    banner.setAttribute("data-status", mine.status);
    banner.setAttribute("data-table", String(mine.table));
    banner.setAttribute("data-chips", mine.chips.toString());
    banner.replaceChildren(...bannerText(info, mine));
    const over = info?.status === TournamentStatus.FINISHED || info?.status === TournamentStatus.CANCELLED;
    if (DONE.has(mine.status) || mine.place > 0 || over) {
      show(
        h(
          "p",
          { "data-testid": "tournament-result", "data-place": String(mine.place), "data-prize": mine.prize.toString() },
          mine.place > 0 ? `You finished ${placeText(mine.place)}${prizeText(mine.prize)}.` : `The tournament is ${statusName(info?.status ?? TournamentStatus.UNSPECIFIED)}.`,
        ),
      );
      return;
    }
    if (mine.table === 0) {
      if (open || root.querySelector("[data-testid=tournament-page]") === null)
        show(h("p", { "data-testid": "tournament-waiting" }, info?.status === TournamentStatus.RUNNING ? "Waiting for your next table…" : "Waiting for the tournament to start…"));
      await wait(1000);
      continue;
    }
    const tableId = mine.tableId; // the service's own id of his table: never built here
    if (tableId !== open) {
      closer?.abort();
      closer = new AbortController();
      open = tableId;
      left = tablePage(root, go, tableId, { tournament: { banner, signal: closer.signal } });
      await wait(300); // moved or gone at once: look again soon
      continue;
    }
    const end = await wait(POLL_MS);
    if (end === "gone") {
      open = ""; // his table is gone: look up the next one (the same number may be reused)
      left = undefined;
      await new Promise((resolve) => window.setTimeout(resolve, 500));
    }
  }
  closer?.abort();
}
