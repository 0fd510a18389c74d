// `npm run demo`: starts Orka, applies examples/quickstart.yaml (an offline scripted model calling
// a custom HTTP Tool), waits for the Task and prints its result. Keeps serving until Ctrl-C,
// unless --once is given. It uses the data dir `npm start` uses, so the CLI config written on its
// first start serves the quick start too.
import { readFileSync } from "node:fs";
import { homedir } from "node:os";
import { resolve } from "node:path";
import { applyDocuments, readApplySources } from "../src/cli/apply.ts";
import { ApiClient } from "../src/cli/client.ts";
import { serverConfigFrom } from "../src/config.ts";
import { startOrka } from "../src/server.ts";

const once = process.argv.includes("--once");
const root = resolve(import.meta.dirname, "..");
// The quickstart's Tool calls this server on loopback, which Tools may reach only when the operator allows it.
const config = serverConfigFrom({ ORKA_DATA_DIR: resolve(root, ".orka"), ORKA_LOG_LEVEL: "warn", ORKA_ALLOW_LOOPBACK_EGRESS: "true", ...process.env }, homedir());
// A refusal (another server on this data dir) is one line for a person, not a stack trace.
const orka = await startOrka(config).catch((err: Error) => {
  console.error(`error: ${err.message}`);
  process.exit(1);
});
const token = config.adminToken ?? readFileSync(resolve(config.dataDir, "admin-token"), "utf8").trim();
const api = new ApiClient({ server: orka.url, token });
console.log(`orka listening on ${orka.url}`);
for (const notice of orka.notices) console.log(`orka: ${notice}`);

await api.delete("tasks/hello").catch(() => undefined);
for (let i = 0; i < 50 && (await api.get("tasks/hello").then(() => true, () => false)); i++) await new Promise((r) => setTimeout(r, 100));
await applyDocuments(api, readApplySources(resolve(root, "examples/quickstart.yaml")), (line) => console.log(`  ${line}`));

let task: { status?: { phase?: string; message?: string } } = {};
for (let i = 0; i < 300; i++) {
  task = await api.get("tasks/hello");
  if (["Succeeded", "Failed", "Cancelled"].includes(task.status?.phase ?? "")) break;
  await new Promise((r) => setTimeout(r, 100));
}
console.log(`\ntask/hello: ${task.status?.phase} — ${task.status?.message}`);
if (task.status?.phase === "Succeeded") console.log(`result: ${(await api.get<{ result: string }>("tasks/hello/result")).result}`);
console.log(`
API:      ${orka.url}/api/v1  (admin token in ${resolve(config.dataDir, "admin-token")})
Try:      bin/orka --server ${orka.url} task events hello
          bin/orka --server ${orka.url} get tasks`);

if (once || task.status?.phase !== "Succeeded") {
  await orka.close();
  process.exit(task.status?.phase === "Succeeded" ? 0 : 1);
}
console.log("\nOrka keeps running; press Ctrl-C to stop.");
process.once("SIGINT", async () => {
  await orka.close();
  process.exit(0);
});
