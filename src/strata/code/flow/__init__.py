"""Value flow: which values reach which names, so calls through variables,
attributes, parameters and returns reach their declarations.

:mod:`.model` is the language-neutral IR each adapter fills per file,
:mod:`.solver` propagates it over a repository, :mod:`.index` answers the
resolver's questions (``build_flow``), :mod:`.guess` decides when a name alone
may link a call, :mod:`.imports` when an absolute import is the standard library.

Nothing is imported here: adapters import :mod:`.python` while the language
registry is still loading, and the solver needs the module index, which needs
that registry.
"""
