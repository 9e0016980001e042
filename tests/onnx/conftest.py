import pytest

import aiond as mx


@pytest.fixture(autouse=True)
def _own_names():
    """Graphs built here (exports, imports) name their nodes under their own
    NameManager, so later tests see the global counters as they left them."""
    with mx.name.NameManager():
        yield
