// A pooled worker process's entry: its modules load with the compile cache on.
import { loadWithCompileCache } from "../../util/compile-cache.ts";

await loadWithCompileCache(new URL("./pooled-worker.ts", import.meta.url));
