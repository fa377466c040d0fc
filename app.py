"""Mobile-Agent-E web demo (Gradio): type a task, watch the phone being operated step by step.

Thin on purpose: this file reads the command line and starts the server; the page is composed in
``mae/ui/demo.py`` from one module per tab (``run_tab``, ``memory_page``, ``history_page``,
``evaluate_tab``). ``python app.py`` starts it with the virtual phone unless a phone is attached;
``python app.py --help`` lists options.
"""

from __future__ import annotations

from mae.ui.preflight import port_free, port_in_use, refuse_a_taken_port

if __name__ == "__main__":  # a wrong flag or a taken port is said before the imports below (seconds)
    refuse_a_taken_port()

from mae.config import load_settings
from mae.errors import MaeError
from mae.llm.keys import configure_server_keys
from mae.public_mode import set_server
from mae.ui import space
from mae.ui.demo import SETTINGS_KEY, build_demo, launch
from mae.ui.launch import (
    approval_timeout,
    parse_args,
    remove_private_temp_dir,
    server_options,
    settings_overrides,
    stop_on_sigterm,
    use_private_temp_dir,
)
from mae.ui.runner import Backend

__all__ = ["SETTINGS_KEY", "build_demo", "launch", "main", "port_free", "port_in_use", "running_line"]


def main(argv: list[str] | None = None) -> None:
    """Parse the command line, build the demo and serve it."""
    args = parse_args(argv)
    try:
        server = server_options(args)
        set_server(share=server.share, host=server.host)  # public or private: decided once, here
        settings = space.apply_defaults(load_settings(args.profile, overrides=settings_overrides(args)))
        backend = Backend(settings, approval_timeout_s=approval_timeout())
        options = server.launch_kwargs()
        refused = configure_server_keys(share=server.share, host=server.host)
        if refused:
            print(f"{refused[:1].upper()}{refused[1:]}: visitors enter their own API keys.")
    except MaeError as exc:  # a bad profile, backbone or variable: say what to fix, no traceback
        raise SystemExit(f"error: {exc}") from None
    if not port_free(options["server_name"], options["server_port"]):  # before the UI takes seconds
        raise SystemExit(port_in_use(options["server_name"], options["server_port"]))
    temp_dir = use_private_temp_dir()  # uploads of this server only, removed when it stops
    stop_on_sigterm()  # a stop by SIGTERM (docker stop, a Space restart) removes it too
    demo = None
    try:  # from here on any way out (Ctrl-C, SIGTERM, a refused port) removes the folder
        demo = build_demo(backend)
        try:  # Gradio's own lines name its launch() options, not this command's flags: ours instead
            launch(demo, prevent_thread_lock=True, quiet=not server.share, **options)
        except OSError as exc:  # Gradio says "Cannot find empty port in range: 7860-7860. ..."
            if "port" not in str(exc).lower():
                raise
            raise SystemExit(port_in_use(options["server_name"], options["server_port"])) from None
        print(running_line(server.host, server.port, server.share), flush=True)
        demo.block_thread()  # until Ctrl-C
    finally:
        if demo is not None:
            demo.close()
        remove_private_temp_dir(temp_dir)


def running_line(host: str, port: int, share: bool) -> str:
    """What ``python app.py`` prints once the demo answers."""
    shown = "127.0.0.1" if host in ("0.0.0.0", "::") else host
    tail = "" if share else "; add --share for a temporary public link"
    return f"mae demo: http://{shown}:{port} (Ctrl-C stops it{tail})"


if __name__ == "__main__":
    main()
