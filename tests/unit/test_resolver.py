"""Call, import and inheritance resolution over hand-built extracts (no parser, no database)."""

from __future__ import annotations

from strata.code.model import CallSite, FileExtract, Import, SymbolDef
from strata.code.modules import ModuleIndex, PackageInfo, detect_packages
from strata.code.resolver import Resolver


def sym(
    qualname: str,
    kind: str = "function",
    *,
    line: int = 1,
    bases: tuple[str, ...] = (),
    implements: tuple[str, ...] = (),
) -> SymbolDef:
    parent = qualname.rsplit(".", 1)[0] if "." in qualname else None
    return SymbolDef(
        qualname=qualname,
        name=qualname.rsplit(".", 1)[-1],
        kind=kind,  # type: ignore[arg-type]
        line_start=line,
        line_end=line + 1,
        body_hash="h",
        parent=parent,
        bases=bases,
        implements=implements,
    )


def call(caller: str | None, callee: str, line: int = 10) -> CallSite:
    receiver, _, name = callee.rpartition(".")
    return CallSite(caller=caller, callee=callee, name=name, receiver=receiver or None, line=line)


def extract(
    path: str,
    language: str,
    symbols: list[SymbolDef],
    calls: list[CallSite] = (),  # type: ignore[assignment]
    imports: list[Import] = (),
    package: str | None = None,
) -> FileExtract:  # type: ignore[assignment]
    return FileExtract(
        path=path,
        language=language,
        lines=20,
        symbols=tuple(symbols),
        calls=tuple(calls),
        imports=tuple(imports),
        package=package,
    )


def resolve(files: list[FileExtract], packages: list[PackageInfo] | None = None) -> Resolver:
    return Resolver(ModuleIndex({f.path: f for f in files}, packages or []))


def targets(resolver: Resolver, path: str) -> list[tuple[str | None, str, str]]:
    out = resolver.resolve_file(path)
    return sorted(
        (c.src_qualname, f"{c.dst_path}:{c.dst_qualname}", c.resolution) for c in out.calls
    )


class TestPython:
    """Python calls resolve through self, imports, aliases, relative imports and bases."""

    def setup_method(self) -> None:
        self.models = extract(
            "app/models.py",
            "python",
            [
                sym("Order", "class"),
                sym("Order.validate", "method"),
                sym("Order.save", "method"),
                sym("Invoice", "class"),
                sym("Invoice.validate", "method"),
                sym("Base", "class"),
                sym("Base.audit", "method"),
                sym("Special", "class", bases=("Base",)),
                sym("Special.run", "method"),
            ],
            [
                call("Order.save", "self.validate"),
                call("Special.run", "self.audit", 20),
                call("Special.run", "super.audit", 21),
            ],
        )
        self.helpers = extract("app/helpers.py", "python", [sym("fmt"), sym("shared")])
        self.service = extract(
            "app/service.py",
            "python",
            [sym("place")],
            [
                call("place", "Order", 5),
                call("place", "h.fmt", 6),
                call("place", "os.path.join", 7),
                call("place", "nowhere", 8),
                call("place", "thing.validate", 9),
            ],
            [
                Import("app.helpers", 1, alias="h"),
                Import("app.models", 2, names=("Order",)),
                Import("os", 3),
            ],
        )
        self.rel = extract(
            "app/sub/rel.py",
            "python",
            [sym("go")],
            [call("go", "shared")],
            [
                Import("..helpers", 1, names=("shared",)),
            ],
        )
        self.resolver = resolve([self.models, self.helpers, self.service, self.rel])

    def test_self_picks_the_callers_class(self) -> None:
        assert ("Order.save", "app/models.py:Order.validate", "self") in targets(
            self.resolver, "app/models.py"
        )

    def test_bare_name_in_a_method_is_not_a_sibling_method(self) -> None:
        """Python has no implicit self: `validate()` inside a method is not Order.validate."""
        models = extract(
            "m.py",
            "python",
            [
                sym("Order", "class"),
                sym("Order.validate", "method"),
                sym("Order.save", "method"),
                sym("Invoice", "class"),
                sym("Invoice.validate", "method"),
            ],
            [call("Order.save", "validate")],
        )
        resolver = resolve([models])
        assert targets(resolver, "m.py") == []
        assert resolver.resolve_file("m.py").unresolved == {"Order.save": ["validate@10"]}

    def test_inherited_and_super_calls_reach_the_base(self) -> None:
        found = targets(self.resolver, "app/models.py")
        assert ("Special.run", "app/models.py:Base.audit", "hierarchy") in found

    def test_imports_aliases_and_classes(self) -> None:
        found = targets(self.resolver, "app/service.py")
        assert ("place", "app/models.py:Order", "import") in found
        assert ("place", "app/helpers.py:fmt", "import") in found

    def test_ambiguous_method_on_unknown_receiver_is_not_linked(self) -> None:
        found = targets(self.resolver, "app/service.py")
        assert not any(t[1].endswith("validate") for t in found)
        unresolved = self.resolver.resolve_file("app/service.py").unresolved["place"]
        assert "thing.validate@9" in unresolved
        assert "nowhere@8" in unresolved

    def test_external_calls_are_counted_not_linked(self) -> None:
        assert self.resolver.resolve_file("app/service.py").external_calls == 1

    def test_relative_import(self) -> None:
        assert targets(self.resolver, "app/sub/rel.py") == [
            ("go", "app/helpers.py:shared", "import")
        ]

    def test_import_edges_reach_files(self) -> None:
        imports = self.resolver.resolve_file("app/service.py").imports
        by_module = {i.module: i.paths for i in imports}
        assert by_module["app.helpers"] == ("app/helpers.py",)
        assert by_module["app.models"] == ("app/models.py",)
        assert by_module["os"] == ()

    def test_an_import_naming_nothing_gets_no_edge(self) -> None:
        # An adapter's odd case (a Rust `use x as y` once gave module ""): no file, no
        # module name, so no Module node to point to; the other imports stay.
        odd = extract("rs/odd.rs", "rust", [sym("f")], imports=[Import("", 1), Import("std", 2)])
        imports = resolve([odd]).resolve_file("rs/odd.rs").imports
        assert [i.module for i in imports] == ["std"]

    def test_inheritance_edges(self) -> None:
        types = self.resolver.resolve_file("app/models.py").types
        assert [(t.type, t.src_qualname, t.dst_qualname) for t in types] == [
            ("INHERITS", "Special", "Base")
        ]

    def test_unique_method_name_links_with_low_confidence(self) -> None:
        only = extract("x.py", "python", [sym("K", "class"), sym("K.rare_method", "method")])
        user = extract("y.py", "python", [sym("use")], [call("use", "obj.rare_method")])
        found = resolve([only, user]).resolve_file("y.py").calls
        assert [(c.dst_qualname, c.resolution, c.confidence) for c in found] == [
            ("K.rare_method", "name_only", 0.5)
        ]


class TestJavaScript:
    """JS/TS relative imports resolve named, aliased and default imports."""

    def test_named_alias_and_default(self) -> None:
        util = extract("src/util.ts", "typescript", [sym("format"), sym("parse")])
        main = extract(
            "src/lib/main.ts",
            "typescript",
            [sym("run")],
            [
                call("run", "fmt", 3),
                call("run", "parse", 4),
            ],
            [
                Import("../util", 1, names=("format",), alias="fmt"),
                Import("../util", 2, names=("default",), alias="parse"),
                Import("react", 3, names=("useState",)),
            ],
        )
        resolver = resolve([util, main])
        assert targets(resolver, "src/lib/main.ts") == [
            ("run", "src/util.ts:format", "import"),
            ("run", "src/util.ts:parse", "import"),
        ]


class TestGo:
    """Go resolves calls within a package across files, and methods through the receiver."""

    def test_same_package_and_receiver(self) -> None:
        packages = detect_packages(["go.mod"], {"go.mod": b"module example.com/shop\n"})
        a = extract(
            "svc/a.go",
            "go",
            [
                sym("Server", "struct"),
                sym("Server.Start", "method"),
                sym("Server.handle", "method"),
            ],
            [call("Server.Start", "s.handle"), call("Server.Start", "helper", 11)],
            package="svc",
        )
        b = extract("svc/b.go", "go", [sym("helper")], package="svc")
        c = extract(
            "cmd/main.go",
            "go",
            [sym("main")],
            [call("main", "svc.helper")],
            [Import("example.com/shop/svc", 3)],
            package="main",
        )
        resolver = resolve([a, b, c], packages)
        assert targets(resolver, "svc/a.go") == [
            ("Server.Start", "svc/a.go:Server.handle", "self"),
            ("Server.Start", "svc/b.go:helper", "import"),
        ]
        assert targets(resolver, "cmd/main.go") == [("main", "svc/b.go:helper", "import")]


class TestJava:
    """Java resolves implicit `this`, imports of classes, and interface implementation."""

    def test_implicit_this_and_imports(self) -> None:
        repo = extract(
            "src/com/shop/Repo.java",
            "java",
            [
                sym("Repo", "interface"),
                sym("Repo.save", "method"),
            ],
            package="com.shop",
        )
        impl = extract(
            "src/com/shop/db/SqlRepo.java",
            "java",
            [
                sym("SqlRepo", "class", implements=("Repo",)),
                sym("SqlRepo.save", "method"),
                sym("SqlRepo.check", "method"),
            ],
            [call("SqlRepo.save", "check")],
            [Import("com.shop.Repo", 1)],
            package="com.shop.db",
        )
        resolver = resolve([repo, impl])
        assert targets(resolver, "src/com/shop/db/SqlRepo.java") == [
            ("SqlRepo.save", "src/com/shop/db/SqlRepo.java:SqlRepo.check", "self")
        ]
        types = resolver.resolve_file("src/com/shop/db/SqlRepo.java").types
        assert [(t.type, t.dst_path, t.dst_qualname) for t in types] == [
            ("IMPLEMENTS_TYPE", "src/com/shop/Repo.java", "Repo")
        ]


class TestPackages:
    """Manifests become packages named from their content."""

    def test_detects_manifests(self) -> None:
        found = detect_packages(
            ["pyproject.toml", "web/package.json", "svc/go.mod", "README.md"],
            {
                "pyproject.toml": b'[project]\nname = "shop"\n',
                "web/package.json": b'{"name": "shop-web"}',
                "svc/go.mod": b"module example.com/svc\n",
            },
        )
        assert [(p.path, p.name, p.ecosystem) for p in found] == [
            ("", "shop", "python"),
            ("svc", "example.com/svc", "go"),
            ("web", "shop-web", "npm"),
        ]


class TestModuleNames:
    """Python modules are named as they are imported, also in a src/ layout."""

    def test_src_layout(self) -> None:
        core = extract("src/shop/core.py", "python", [sym("run")])
        user = extract(
            "tests/test_core.py",
            "python",
            [sym("test_run")],
            [call("test_run", "run")],
            [Import("shop.core", 1, names=("run",))],
        )
        resolver = resolve([core, user])
        assert resolver.index.module_of["src/shop/core.py"] == "shop.core"
        assert targets(resolver, "tests/test_core.py") == [
            ("test_run", "src/shop/core.py:run", "import")
        ]
