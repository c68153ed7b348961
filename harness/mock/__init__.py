"""``harness mock``: a recorded deployment served back (service virtualization).

The engine as a library, the command (harness.commands.mock) a thin shell over it::

    from harness.mock import Mock, Options, load
    from harness.reference.app import create_app
    from harness.reference.server import running

    index = load(contract, ["staging.jsonl"])
    mock = Mock(contract, index, Options(fallback="reference"))
    with running(contract, app=create_app(contract, mock.respond)) as url:
        ...  # any client, any binding, against url

``index`` (harness.mock.index) reads recordings into an index by call; ``values`` says when two
calls are the same call; ``answers`` gives a recorded answer in the asking binding's form;
``service`` is the mock itself (the reference's binding rules, then the recording);
``summary`` what it says when it stops.
"""

from harness.mock.index import Index, load
from harness.mock.service import Mock, Options, Stats

__all__ = ["Index", "Mock", "Options", "Stats", "load"]
