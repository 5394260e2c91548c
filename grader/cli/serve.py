"""`meteor-kit serve`: the student's page on localhost, with the headers it needs.

COOP and COEP make the page cross-origin isolated, which gives it SharedArrayBuffer, so a
test that loops can be interrupted instead of restarting Python.
"""

from __future__ import annotations

import argparse
import functools
import http.server
import sys
import threading
from pathlib import Path

from grader.cli.exercise_option import add_exercise_option
from grader.core.exercise import Exercise
from grader.export import web as web_build

HEADERS = {
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Embedder-Policy": "require-corp",
    "Cross-Origin-Resource-Policy": "same-origin",
    "X-Content-Type-Options": "nosniff",
}
MIME_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".mjs": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".json": "application/json",
    ".wasm": "application/wasm",
    ".zip": "application/zip",
    ".woff2": "font/woff2",
    ".woff": "font/woff",
    ".ttf": "font/ttf",
    ".txt": "text/plain; charset=utf-8",
}


class SiteHandler(http.server.SimpleHTTPRequestHandler):
    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map, **MIME_TYPES}

    def end_headers(self) -> None:
        for name, value in HEADERS.items():
            self.send_header(name, value)
        # The page's files change only with a rebuild; the draft lives in localStorage.
        self.send_header("Cache-Control", "no-cache")
        super().end_headers()

    def log_message(self, format: str, *args) -> None:
        if not getattr(self.server, "quiet", False):
            super().log_message(format, *args)


def make_server(site: Path, port: int = 8000, host: str = "127.0.0.1", quiet: bool = False) -> http.server.ThreadingHTTPServer:
    handler = functools.partial(SiteHandler, directory=str(site))
    server = http.server.ThreadingHTTPServer((host, port), handler)
    server.quiet = quiet  # type: ignore[attr-defined]
    return server


def serve_in_thread(site: Path, port: int = 0) -> tuple[http.server.ThreadingHTTPServer, str]:
    """Serve `site` on a free port in a background thread; for tests and the benchmark."""
    server = make_server(site, port, quiet=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/"


def cmd_serve(args: argparse.Namespace) -> int:
    ex = args.exercise
    site = Path(args.dir).resolve() if args.dir else web_build.default_out(ex)
    if args.rebuild or not web_build.is_current(ex, site):
        web_build.build(ex, site)
    try:
        server = make_server(site, args.port, args.host)
    except OSError as exc:
        print(f"meteor-kit serve: cannot listen on {args.host}:{args.port}: {exc.strerror}", file=sys.stderr)
        return 1
    url = f"http://{'localhost' if args.host in ('127.0.0.1', 'localhost') else args.host}:{server.server_address[1]}/"
    print(f"The student's page is at {url}  (Ctrl+C stops the server)", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


def register(commands: argparse._SubParsersAction, ex: Exercise) -> None:
    parser = commands.add_parser(
        "serve",
        help="build the student's page if needed and serve it on localhost",
        description=f"Build the students' page of {ex.title} if needed, and serve it on localhost.",
    )
    parser.add_argument("--port", type=int, default=8000, help="port to listen on (default: 8000)")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1)")
    parser.add_argument("--dir", help="the site to serve, built there if needed (default: build/web in the exercise's folder)")
    parser.add_argument("--rebuild", action="store_true", help="build the site even if it is up to date")
    add_exercise_option(parser)
    parser.set_defaults(func=cmd_serve)
