import { fileURLToPath } from "node:url";
import react from "@vitejs/plugin-react";
import { defineConfig } from "vite";

// The dashboard builds into dist/ui, which `orka serve` serves at /.
export default defineConfig({
  root: fileURLToPath(new URL(".", import.meta.url)),
  plugins: [react()],
  build: { outDir: fileURLToPath(new URL("../dist/ui", import.meta.url)), emptyOutDir: true, chunkSizeWarningLimit: 1024 },
  server: { proxy: { "/api": "http://127.0.0.1:8080" } },
});
