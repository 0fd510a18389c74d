import { readFileSync } from "node:fs";
import { Option } from "commander";

/** `-o table|json|yaml`, which every listing command takes. */
export const outputOption = () =>
  new Option("-o, --output <format>", "output format").choices(["table", "json", "yaml"]).default("table");

/** A file's text, or stdin's for `-`. */
export function readInput(file: string): string {
  return readFileSync(file === "-" ? 0 : file, "utf8");
}
