"""Everything Strata asks git, in one package below the layers.

- :mod:`strata.git.names`: sha and ref validation (before git sees them);
- :mod:`strata.git.runner`: the one subprocess runner and its error mapping;
- :mod:`strata.git.repo`: commits, trees, blobs, diffs and history walks;
- :mod:`strata.git.mirror`: the local copy of a registered repository.

Nothing outside this package runs ``git``.
"""

from strata.git.mirror import open_repository
from strata.git.names import (
    branch_ref,
    check_ref,
    is_zero_sha,
    readable_path,
    require_commit_sha,
    require_sha,
    valid_sha,
)
from strata.git.repo import Change, CommitInfo, Git, TreeEntry, resolve_commit
from strata.git.runner import GitResult, git_succeeds, public_text, run_git

__all__ = [
    "Change",
    "CommitInfo",
    "Git",
    "GitResult",
    "TreeEntry",
    "branch_ref",
    "check_ref",
    "git_succeeds",
    "is_zero_sha",
    "open_repository",
    "public_text",
    "readable_path",
    "require_commit_sha",
    "require_sha",
    "resolve_commit",
    "run_git",
    "valid_sha",
]
