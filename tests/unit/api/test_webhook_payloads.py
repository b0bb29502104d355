"""Push payloads of every provider normalize to (ref, before, after, forced) (no services)."""

from __future__ import annotations

import pytest

from strata.errors import ValidationError
from strata_api.webhooks import NO_COMMIT, Push, _pushes

ZERO = NO_COMMIT

A, B = "a" * 40, "b" * 40


class TestNormalization:
    """Each provider's push shape yields the same provider-neutral pushes."""

    @pytest.mark.parametrize("provider", ["github", "gitea", "gitlab"])
    def test_github_shaped(self, provider: str) -> None:
        payload = {"ref": "refs/heads/main", "before": A, "after": B, "forced": True}
        assert _pushes(provider, "push", payload) == [Push("refs/heads/main", A, B, True)]

    def test_forced_must_be_true_not_truthy(self) -> None:
        payload = {"ref": "refs/heads/main", "before": A, "after": B, "forced": "yes"}
        assert _pushes("github", "push", payload)[0].forced is False

    def test_bitbucket_cloud_changes(self) -> None:
        payload = {
            "push": {
                "changes": [
                    {
                        "old": {"type": "branch", "name": "main", "target": {"hash": A}},
                        "new": {"type": "branch", "name": "main", "target": {"hash": B}},
                        "forced": True,
                    },
                    {"old": None, "new": {"type": "tag", "name": "v1", "target": {"hash": B}}},
                    {"old": {"type": "branch", "name": "gone", "target": {"hash": A}}, "new": None},
                ]
            }
        }
        assert _pushes("bitbucket", "repo:push", payload) == [
            Push("refs/heads/main", A, B, True),
            Push("refs/tags/v1", ZERO, B),
            Push("refs/heads/gone", A, ZERO),
        ]

    def test_bitbucket_data_center_changes(self) -> None:
        payload = {"changes": [{"ref": {"id": "refs/heads/main"}, "fromHash": A, "toHash": B}]}
        assert _pushes("bitbucket", "repo:refs_changed", payload) == [Push("refs/heads/main", A, B)]


class TestMalformedPayloads:
    """A payload of the wrong shape is a validation error, never a crash."""

    @pytest.mark.parametrize(
        "payload",
        [
            {},
            {"ref": 1, "before": A, "after": B},
            {"ref": "refs/heads/main", "before": None, "after": B},
            {"ref": ["refs/heads/main"], "before": A, "after": B},
        ],
    )
    def test_github_shaped(self, payload: dict[str, object]) -> None:
        with pytest.raises(ValidationError):
            _pushes("github", "push", payload)

    @pytest.mark.parametrize(
        "payload",
        [
            {},
            {"push": []},
            {"push": {"changes": "x"}},
            {"push": {"changes": [1]}},
            {"push": {"changes": [{"new": None, "old": None}]}},
            {"push": {"changes": [{"new": {"type": "bookmark", "name": "x"}}]}},
            {"push": {"changes": [{"new": {"type": "branch", "name": 3}}]}},
            {"push": {"changes": [{"new": {"type": "branch", "name": "m", "target": {}}}]}},
        ],
    )
    def test_bitbucket_cloud(self, payload: dict[str, object]) -> None:
        with pytest.raises(ValidationError):
            _pushes("bitbucket", "repo:push", payload)
