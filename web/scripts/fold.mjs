// The TypeScript table fold on a recorded stream, for the cross-language contract test
// (tests/web/test_table_fold_contract.py): reads PlayEvents (base64 of their binary form, one a
// line), folds them for the player and prints the table after each table event as JSON.
// Needs `npm run build:fold` first (src/table compiled to build/fold).
//
//   node scripts/fold.mjs EVENTS_FILE PLAYER_ID   (PLAYER_ID "-": an observer)
import { readFileSync } from "node:fs";
import { foldLines } from "../build/fold/table/contract.js";

const [file, who] = process.argv.slice(2);
if (!file || !who) {
  console.error("usage: node scripts/fold.mjs EVENTS_FILE PLAYER_ID");
  process.exit(2);
}
const me = who === "-" ? "" : who; // "-": an observer
process.stdout.write(JSON.stringify(foldLines(me, readFileSync(file, "utf8").split("\n"))) + "\n");
