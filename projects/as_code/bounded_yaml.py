"""A YAML reader with bounds, for files people upload (S4-07).

`yaml.safe_load` resolves aliases into shared references, so 378 bytes of
anchors nine wide and seven deep become 4.8 million strings once the import
serialises them (5 s and 690 MB in the review); one level more exhausts
memory. An export never writes anchors, so a file that uses an alias is
refused before anything is built, and so is one too long or with too many
nodes (each node costs a few hundred bytes while it is composed).
"""

from __future__ import annotations

import yaml
from yaml.events import AliasEvent

MAX_BYTES = 1024 * 1024  # a 2,000-project export is about 400 kB
MAX_NODES = 200_000  # about 20 nodes a project: room for 10,000 projects


class Refused(ValueError):
    """The text is not read at all; the message says why, for the user."""


class _BoundedLoader(yaml.SafeLoader):
    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self.nodes = 0

    def compose_node(self, parent, index):
        if self.check_event(AliasEvent):
            mark = self.peek_event().start_mark
            raise Refused(
                f"YAML aliases (*name) are not read (line {mark.line + 1}); "
                "write each value out in full."
            )
        self.nodes += 1
        if self.nodes > MAX_NODES:
            raise Refused(f"The file has more than {MAX_NODES:,} values.")
        return super().compose_node(parent, index)


def load(text: str) -> object:
    """The document in `text`; raises Refused for a file over the bounds,
    yaml.YAMLError when it is not YAML."""
    size = len(text.encode("utf-8"))
    if size > MAX_BYTES:
        raise Refused(f"The file is {size:,} bytes; at most {MAX_BYTES:,} are read.")
    loader = _BoundedLoader(text)
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()
