"""Clone URLs and branch names are checked before a registration is written (no services)."""

from __future__ import annotations

import pytest

from strata.errors import ValidationError
from strata.registry import check_branch_name, check_clone_url


class TestCloneUrls:
    """Only hosts and paths, never something git or ssh would read as an option."""

    @pytest.mark.parametrize(
        "url",
        [
            "https://github.com/acme/payments.git",
            "http://git.internal/x",
            "ssh://git@host:2222/acme/x.git",
            "git://host/x",
            "git@github.com:acme/payments.git",
        ],
    )
    def test_ordinary_urls(self, url: str) -> None:
        assert check_clone_url(url) == url

    @pytest.mark.parametrize(
        "url",
        [
            "ssh://-oProxyCommand=...",
            "ssh://git@-oProxyCommand=x/y",
            "ssh://host/-x",
            "https://host:-1/x",
            "-oProxyCommand=x@host:path",
            "git@-host:path",
            "git@host:-path",
            "https://host/a\x01b",
            "https://host/a\x7f",
            "ext::sh -c touch% /tmp/x",
            "file:///etc",
            "https://",
        ],
    )
    def test_refused(self, url: str) -> None:
        with pytest.raises(ValidationError):
            check_clone_url(url)


class TestBranchNames:
    """git check-ref-format rules, plus no leading '-'; the short name is returned."""

    @pytest.mark.parametrize(
        ("name", "short"),
        [
            ("main", "main"),
            ("refs/heads/main", "main"),
            ("feature/x-1", "feature/x-1"),
            ("v1.0", "v1.0"),
        ],
    )
    def test_ordinary_names(self, name: str, short: str) -> None:
        assert check_branch_name(name) == short

    @pytest.mark.parametrize(
        "name",
        [
            "refs/heads/--upload-pack=x",
            "-x",
            "",
            "@",
            "a..b",
            "a@{1}",
            "a//b",
            "/a",
            "a/",
            "a.",
            "a/.b",
            "x.lock",
            "a b",
            "a~1",
            "a^",
            "a:b",
            "a?",
            "a*",
            "a[b",
            "a\\b",
            "a\x00b",
            "x" * 256,
        ],
    )
    def test_refused(self, name: str) -> None:
        with pytest.raises(ValidationError):
            check_branch_name(name)
