"""`apollo model serve`: a GGUF model behind llama.cpp's own OpenAI-compatible server, on this machine's CPU.

    apollo model serve                      # the demo model the set-up installs (SmolLM2-135M)
    apollo model serve PATH.gguf --port 8080 --alias mymodel --ctx 2048 --parallel 4 [--lora FILE]

The first line printed is the base URL; the next says the model name and the context each
request may use. It serves until Ctrl-C.
"""

from __future__ import annotations

import argparse
import errno
import socket
import sys
import threading
from pathlib import Path
from typing import Any

from engine.console.argtypes import whole_number
from engine.errors import EngineError


def register(subparsers: Any) -> None:
    model = subparsers.add_parser("model", help="serve a GGUF model on this machine (llama.cpp's server)")
    actions = model.add_subparsers(dest="model_command", metavar="ACTION")
    actions.required = True
    serve = actions.add_parser("serve", help="serve a GGUF file over the OpenAI-compatible API until Ctrl-C")
    serve.add_argument("gguf", nargs="?", metavar="PATH.gguf",
                       help="the model file (default: the SmolLM2-135M demo model the set-up installs)")
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    serve.add_argument("--port", type=whole_number(0, 65535), default=8080,
                       help="port (default 8080; 0 picks a free one)")
    serve.add_argument("--alias", help="the model name clients send (default: the file's name up to its first dot)")
    serve.add_argument("--ctx", type=whole_number(1), default=2048,
                       help="context tokens per request slot (default 2048)")
    serve.add_argument("--parallel", type=whole_number(1), default=4, help="requests served at once (default 4)")
    serve.add_argument("--lora", action="append", default=[], metavar="FILE", help="a GGUF LoRA adapter (repeatable)")
    serve.add_argument("--threads", type=whole_number(1),
                       help="CPU threads (default: every CPU this process may use but one, at least 1)")
    serve.set_defaults(handler=_cmd_serve)


def _cmd_serve(args: argparse.Namespace) -> int:
    _port_free(args.host, args.port)
    # deferred: xllamacpp loads llama.cpp, only for this command
    from engine.models.llamacpp_server import ServeOptions, default_alias, default_threads, start

    gguf = Path(args.gguf) if args.gguf else _demo_model()
    options = ServeOptions(gguf=gguf, alias=args.alias or default_alias(gguf), host=args.host, port=args.port,
                           ctx_per_slot=args.ctx, parallel=args.parallel,
                           lora=tuple(Path(p) for p in args.lora), threads=args.threads or default_threads())
    server = start(options)
    never = threading.Event()
    try:  # a Ctrl-C from here on stops the server it started, however soon it comes
        print(server.base_url)
        print(f"model {options.alias!r} ({gguf}): context {options.ctx_per_slot} tokens per request, "
              f"{options.parallel} request(s) at once, {options.threads} CPU thread(s)")
        # a small model on a CPU: replies of 256 tokens keep a 4-step solve under a minute (about 66 s with
        # the default, half the context per request, on a 2-core host)
        print(f"try: apollo solve 'What is 2 + 3?' --answer 5 --model {options.alias} --model-url "
              f"{server.base_url} --max-tokens 256")
        print("Ctrl-C to stop", flush=True)
        # Polled: a Ctrl-C or SIGTERM the kernel hands to one of llama.cpp's threads wakes no blocked main
        # thread, and an endless wait would never see it (the command then ignored SIGTERM now and then).
        while not never.wait(0.2):
            pass
    except KeyboardInterrupt:
        print("stopped", file=sys.stderr)
    finally:
        del server
    return 0


def _port_free(host: str, port: int) -> None:
    """Refuse, in one line, a port something else listens on (llama.cpp's own refusal names no cause)."""
    if port == 0:
        return
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # a closed socket's TIME_WAIT is no user
        try:
            probe.bind((host, port))
        except OSError as exc:
            if exc.errno != errno.EADDRINUSE:
                return  # llama.cpp says what is wrong with the address itself
            msg = (f"port {port} on {host} is in use (another server?): --port N serves on another, "
                   "--port 0 on a free one")
            raise EngineError(msg) from exc


def _demo_model() -> Path:
    # deferred: the demo model's package, only when no GGUF is given
    from engine.training.model_package import ModelPackageMissing, gguf_path

    try:
        return gguf_path()
    except ModelPackageMissing as exc:
        raise EngineError(f"{exc}; or give a GGUF file: apollo model serve PATH.gguf") from exc
