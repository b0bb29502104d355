"""The flow IR comes out of parsing, and extracts pickled before it existed still load."""

from __future__ import annotations

import pickle
from dataclasses import fields, replace

from strata.code.flow.model import Attr, Call, Name, Param
from strata.code.languages import parse_file
from strata.code.model import FileExtract

SOURCE = b"""\
class Box:
    def __init__(self, item: "Thing" = None):
        self.item = item

def use(box):
    thing = box.take()
    thing.run(1, key=box)
"""


class TestFlowIr:
    """Assignments, parameters and calls are recorded with their scopes."""

    def test_ir(self) -> None:
        flow = parse_file("m.py", SOURCE).flow
        assert flow is not None
        init = next(f for f in flow.functions if f.qualname == "Box.__init__")
        assert init.params[1] == Param("item", "pos", '"Thing"', None)
        by_scope = {(a.scope, a.line): a for a in flow.assigns}
        init_assign, use_assign = by_scope[("Box.__init__", 3)], by_scope[("use", 6)]
        assert (init_assign.target, init_assign.value) == (Attr(Name("self"), "item"), Name("item"))
        assert (use_assign.target, use_assign.value) == (
            Name("thing"),
            Call(Attr(Name("box"), "take")),
        )
        site = next(c for c in flow.calls if c.callee == "thing.run")
        assert (site.scope, site.line, site.func, site.args, site.keywords) == (
            "use",
            7,
            Attr(Name("thing"), "run"),
            (None,),
            (("key", Name("box")),),
        )
        assert site.block == use_assign.block  # same block: straight-line order applies

    def test_other_languages_have_none(self) -> None:
        assert parse_file("m.go", b"package m\nfunc f() {}\n").flow is None


class TestOldPickles:
    """An extract pickled without the flow field loads with ``flow=None``."""

    def test_load_and_replace(self) -> None:
        extract = parse_file("m.py", SOURCE)
        state = [getattr(extract, f.name) for f in fields(FileExtract)][:-1]
        old = FileExtract.__new__(FileExtract)
        old.__setstate__(state)
        assert old.flow is None
        assert replace(old, path="n.py").path == "n.py"
        assert pickle.loads(pickle.dumps(extract)) == extract  # noqa: S301 - our own bytes
