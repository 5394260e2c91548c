// The page's service worker: the whole site in one cache, named after the build's digest, so
// a reload, a run and a restart of Python work with the server gone. A new build changes this
// file, and so installs a new cache and deletes the old one on the next online visit.
const VERSION = "{{version}}";
const FILES = {{files}};
const CACHE = `meteor-kit-${VERSION}`;
// What keeps the page cross-origin isolated (SharedArrayBuffer, so a loop can be interrupted):
// every response the worker serves carries them, whatever the host sent.
const ISOLATION = {
  "Cross-Origin-Opener-Policy": "same-origin",
  "Cross-Origin-Embedder-Policy": "require-corp",
  "Cross-Origin-Resource-Policy": "same-origin",
};

self.addEventListener("install", (event) => {
  event.waitUntil(
    (async () => {
      const cache = await caches.open(CACHE);
      // "no-cache": revalidate with the server, so a new build never takes an old file.
      await cache.addAll(FILES.map((path) => new Request(path, { cache: "no-cache" })));
      await self.skipWaiting();
    })(),
  );
});

self.addEventListener("activate", (event) => {
  event.waitUntil(
    (async () => {
      for (const name of await caches.keys()) if (name.startsWith("meteor-kit-") && name !== CACHE) await caches.delete(name);
      await self.clients.claim();
    })(),
  );
});

function isolated(response) {
  // Served as it was cached when the server sent the headers already: a response rebuilt here
  // loses its URL, and with it the browser's cache of compiled WebAssembly for the next visit.
  if (Object.entries(ISOLATION).every(([name, value]) => response.headers.get(name) === value)) return response;
  const headers = new Headers(response.headers);
  for (const [name, value] of Object.entries(ISOLATION)) headers.set(name, value);
  return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
}

self.addEventListener("fetch", (event) => {
  const url = new URL(event.request.url);
  if (event.request.method !== "GET" || url.origin !== self.location.origin) return;
  event.respondWith(
    (async () => {
      const cache = await caches.open(CACHE);
      const key = event.request.mode === "navigate" ? new URL("./", self.location).href : url.href.split("#")[0];
      const hit = await cache.match(key, { ignoreSearch: true });
      if (hit) return isolated(hit);
      return isolated(await fetch(event.request));
    })(),
  );
});
