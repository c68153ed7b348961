"""``harness mock``: a recorded deployment served back, stubs, faults, a call journal
(service virtualization).

The engine as a library, the command (harness.commands.mock) a thin shell over it::

    from harness.mock import Mock, Options, Stubs, load, load_stubs
    from harness.mock.admin import create_mock_app
    from harness.reference.server import running

    index = load(contract, ["staging.jsonl"])
    mock = Mock(contract, index, Options(fallback="reference"),
                stubs=Stubs(load_stubs(contract, ["stubs.toml"])))
    with running(contract, app=create_mock_app(contract, mock)) as url:
        ...  # any client, any binding, against url; mock.journal: what it received

``index`` (harness.mock.index) reads recordings into an index by call; ``values`` says when two
calls are the same call; ``answers`` gives a recorded answer in the asking binding's form;
``stubs`` reads stubs files and chooses a call's stub; ``faults`` what is done wrong on
purpose; ``journal`` keeps every call; ``forward`` is record-through; ``service`` is the mock
itself (the reference's binding rules, then stubs, the recording, the fallback); ``admin`` its
API under ``/__harness/`` and ``client`` a client of it; ``summary`` what it says when it
stops.
"""

from harness.mock.index import Index, load
from harness.mock.journal import Journal
from harness.mock.service import Mock, Options, Stats
from harness.mock.stubs import Stubs
from harness.mock.stubs import load_files as load_stubs

__all__ = ["Index", "Journal", "Mock", "Options", "Stats", "Stubs", "load", "load_stubs"]
