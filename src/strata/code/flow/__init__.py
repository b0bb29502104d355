"""Value flow: which values reach which names, so calls through variables,
attributes, parameters and returns reach their declarations.

:mod:`.model` is the language-neutral IR each adapter fills per file,
:mod:`.solver` propagates it over a repository, :mod:`.index` answers the
resolver's questions, :mod:`.guess` decides when a name alone may link a call.
"""

from strata.code.flow.index import FlowIndex, Implied, build_flow
from strata.code.flow.model import FileFlow

__all__ = ["FileFlow", "FlowIndex", "Implied", "build_flow"]
