// The static build goes to dist/ (served by Envoy: deploy/envoy). `npm run dev` serves the pages
// on :5173 and calls the API of the Envoy at VITE_CARDROOM_API (e.g. http://127.0.0.1:8080), which
// must allow that origin (render.py --cors-origin http://127.0.0.1:5173).
import { defineConfig } from "vite";

export default defineConfig({
  build: { outDir: "dist", emptyOutDir: true, sourcemap: true },
  server: { host: "127.0.0.1", port: 5173, strictPort: true },
});
