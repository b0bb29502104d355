"""Every false positive and miss measured on the name-only resolver, as a small program.

The package `courier` sends messages through transports; its test file and its
helpers module declare methods named like builtin container, file and iterator
methods, which a name-only guess used to link.
"""

from __future__ import annotations

from tests.unit.flow._pipeline import edges, unresolved

COURIER = {
    "courier/__init__.py": "from .api import fetch, deliver\nfrom .client import Client\n",
    "courier/api.py": """\
from . import client


def send(verb, address):
    with client.Client() as c:
        return c.send(verb, address)


def fetch(address):
    return send("fetch", address)


def deliver(address):
    return send("deliver", address)
""",
    "courier/client.py": """\
from collections import OrderedDict

from .messages import Envelope, Reply
from .transports import BaseTransport


class Client:
    reply_class = Reply

    def __init__(self):
        self.transports = OrderedDict()
        self._cache = OrderedDict()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def fetch(self, address):
        return self.send("fetch", address)

    def deliver(self, address):
        return self.send("deliver", address)

    def transport_for(self, address) -> BaseTransport:
        return self.transports[address]

    def send(self, verb, address, options=None):
        options = options or {}
        options.setdefault("retries", 1)
        envelope = Envelope()
        envelope.seal(verb=verb, address=address)
        transport = self.transport_for(address)
        raw = transport.push(envelope)
        for cached in self._cache.values():
            print(cached)
        with open(address) as handle:
            handle.read()
        seen = set()
        first = next(iter([raw]))
        print(seen, first)
        return self.reply_class(raw)
""",
    "courier/transports.py": """\
class BaseTransport:
    def push(self, envelope):
        raise NotImplementedError


class HttpTransport(BaseTransport):
    def push(self, envelope):
        return 200
""",
    "courier/messages.py": """\
class Stamp:
    def seal(self):
        pass


class Envelope(Stamp):
    def seal(self, verb=None, address=None):
        self.seal_verb(verb)

    def seal_verb(self, verb):
        self.verb = verb


class Reply:
    def __init__(self, raw=None):
        self.raw = raw

    @property
    def next(self):
        return None
""",
    "courier/helpers.py": """\
class Bag:
    def values(self):
        return []

    def setdefault(self, key, value):
        return value


class Opener:
    def open(self, *args):
        pass
""",
    "tests/test_courier.py": """\
import courier


def test_fetch_and_deliver():
    class set:
        pass

    courier.fetch("a")
    courier.deliver("b")
""",
}


def client_edges() -> set[tuple[str | None, str, str]]:
    return {e for e in edges(COURIER, "courier/client.py") if e[0] == "Client.send"}


class TestNoInventedEdges:
    """Builtin names and container/file methods on unknown receivers link nothing."""

    def test_client_send_links_only_what_it_calls(self) -> None:
        assert client_edges() == {
            ("Client.send", "courier/messages.py:Envelope", "import"),
            ("Client.send", "courier/messages.py:Envelope.seal", "flow"),
            ("Client.send", "Client.transport_for", "self"),
            ("Client.send", "courier/transports.py:BaseTransport.push", "flow"),
            ("Client.send", "courier/messages.py:Reply", "flow"),
            ("Client.send", "courier/messages.py:Reply.__init__", "constructor"),
        }

    def test_builtins_stay_unresolved(self) -> None:
        left = unresolved(COURIER, "courier/client.py")["Client.send"]
        for call in ("options.setdefault@31", "self._cache.values@36", "open@38", "set@40"):
            assert call in left
        assert "next@41" in left

    def test_a_test_local_class_is_never_a_guess(self) -> None:
        probe = dict(COURIER, **{"courier/other.py": "def build():\n    return set()\n"})
        assert edges(probe, "courier/other.py") == set()

    def test_a_unique_rare_method_still_links_by_name(self) -> None:
        probe = dict(
            COURIER,
            **{
                "courier/extra.py": "class Vault:\n    def unlock_all(self):\n        pass\n",
                "courier/user.py": "def go(v):\n    v.unlock_all()\n",
            },
        )
        assert edges(probe, "courier/user.py") == {
            ("go", "courier/extra.py:Vault.unlock_all", "name_only")
        }

    def test_no_guess_into_a_property_or_a_test_file(self) -> None:
        probe = dict(
            COURIER,
            **{
                "courier/user.py": "def go(v):\n    v.only_here()\n    v.rare_prop()\n",
                "tests/test_more.py": "class T:\n    def only_here(self):\n        pass\n",
                "courier/props.py": (
                    "class P:\n    @property\n    def rare_prop(self):\n        return 1\n"
                ),
            },
        )
        assert edges(probe, "courier/user.py") == set()


class TestMisses:
    """Calls the name-only resolver missed now reach their declarations."""

    def test_package_reexports(self) -> None:
        assert edges(COURIER, "tests/test_courier.py") == {
            ("test_fetch_and_deliver", "courier/api.py:fetch", "flow"),
            ("test_fetch_and_deliver", "courier/api.py:deliver", "flow"),
        }

    def test_with_statement_and_module_attribute(self) -> None:
        assert {e for e in edges(COURIER, "courier/api.py") if e[0] == "send"} == {
            ("send", "courier/client.py:Client", "import"),
            ("send", "courier/client.py:Client.__init__", "constructor"),
            ("send", "courier/client.py:Client.__enter__", "implicit"),
            ("send", "courier/client.py:Client.__exit__", "implicit"),
            ("send", "courier/client.py:Client.send", "flow"),
        }
