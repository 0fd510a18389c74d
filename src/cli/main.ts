#!/usr/bin/env node
// The orka command's entry: the CLI, and the server it serves, load with the compile cache on.
import { loadWithCompileCache } from "../util/compile-cache.ts";

await loadWithCompileCache(new URL("./program.ts", import.meta.url));
