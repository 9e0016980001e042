"""The command line's messages: --help gives each default once, and the
server says it is listening once."""
import argparse
import logging
import re
import signal

import pytest

pytest.importorskip("uvicorn")

from aiond.serve import __main__ as cli  # noqa: E402


def test_help_gives_each_default_once():
    text = cli.build_parser().format_help()
    # one chunk per option: from its flag to the next one
    chunks = re.split(r"\n  (?=-)", text)
    assert len(chunks) > 20
    for chunk in chunks:
        assert len(re.findall(r"default", chunk, re.I)) <= 1, chunk
    assert "(default: None)" not in text and "(default: False)" not in text
    assert "--max-batch-size MAX_BATCH_SIZE" in text and "(default: 32)" in text
    assert "(default: 2, or 1 with one engine" in " ".join(text.split())


def test_listening_is_said_once(monkeypatch, capsys, caplog):
    import uvicorn

    class FakeServer:
        def __init__(self, config):
            pass

        def run(self, sockets):
            for s in sockets:
                s.close()
    monkeypatch.setattr(uvicorn, "Server", FakeServer)
    old = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGINT)}
    args = argparse.Namespace(host="127.0.0.1", port=0, http="h11", log_level="info",
                              graceful_timeout=1)
    caplog.set_level(logging.INFO)
    try:
        cli._listen(lambda scope: None, args, logging.getLogger("aiond.serve"), "model 'm'")
    finally:
        for sig, h in old.items():
            signal.signal(sig, h)
    said = capsys.readouterr().err + caplog.text
    assert said.count("listening") == 1, said
    assert re.search(r"aiond\.serve: model 'm' listening on http://127\.0\.0\.1:\d+", said)
