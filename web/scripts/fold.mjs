// The TypeScript table fold on a recorded stream, for the cross-language contract test
// (tests/web/test_table_fold_contract.py): reads PlayEvents (base64 of their binary form, one a
// line), folds them for the player and prints the table after each table event as JSON.
// Needs `npm run build:fold` first (src/table compiled to build/fold).
//
//   node scripts/fold.mjs EVENTS_FILE PLAYER_ID
import { readFileSync } from "node:fs";
import { foldLines } from "../build/fold/table/contract.js";

const [file, me] = process.argv.slice(2);
if (!file || !me) {
  console.error("usage: node scripts/fold.mjs EVENTS_FILE PLAYER_ID");
  process.exit(2);
}
process.stdout.write(JSON.stringify(foldLines(me, readFileSync(file, "utf8").split("\n"))) + "\n");
