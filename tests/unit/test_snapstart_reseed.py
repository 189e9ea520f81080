"""Under SnapStart every environment is restored with the snapshot's random state: each function
with SnapStart reseeds `random` after a restore, so retry jitter does not fire in lockstep."""

from __future__ import annotations

import json
import random
import subprocess
import sys
import textwrap

from conftest import ROOT

from gligabao.ai.retries import RetryPolicy
from gligabao.ai.snapstart import reseed_random
from gligabao.local.template_routes import load_template


def snapstart_functions() -> list[str]:
    """The code folders of the template's functions with SnapStart."""
    resources = load_template(ROOT / "template.yaml")["Resources"]
    return sorted(
        resource["Properties"]["CodeUri"].rstrip("/").split("/")[-1]
        for resource in resources.values()
        if resource["Type"] == "AWS::Serverless::Function" and "SnapStart" in resource["Properties"]
    )


def after_restore_hooks(folders: list[str]) -> dict[str, list[str]]:
    """The after-restore hooks each function's app registers, in a runtime that has SnapStart's
    module (its own process: the module is faked there)."""
    code = textwrap.dedent(f"""
        import importlib.util, json, sys, types
        runtime = types.ModuleType("snapshot_restore_py")
        runtime.register_before_snapshot = lambda hook: None
        hooks = []
        runtime.register_after_restore = hooks.append
        sys.modules["snapshot_restore_py"] = runtime
        found = {{}}
        for folder in {folders!r}:
            hooks.clear()
            spec = importlib.util.spec_from_file_location(
                "app_" + folder, {str(ROOT / "functions")!r} + "/" + folder + "/app.py")
            spec.loader.exec_module(importlib.util.module_from_spec(spec))
            found[folder] = [hook.__module__ + "." + hook.__qualname__ for hook in hooks]
        print(json.dumps(found))
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def test_every_function_with_snapstart_reseeds_random_after_a_restore():
    folders = snapstart_functions()
    assert len(folders) == 8

    hooks = after_restore_hooks(folders)

    assert hooks == {folder: ["gligabao.ai.snapstart.reseed_random"] for folder in folders}


def test_the_hook_changes_randoms_state():
    random.seed(37)
    snapshot = random.getstate()

    reseed_random()

    assert random.getstate() != snapshot


def test_two_copies_restored_from_one_snapshot_draw_different_jitter():
    policy = RetryPolicy.for_llm()
    random.seed(37)  # the state the snapshot holds
    snapshot = random.getstate()

    def restored_copy_draws(reseed: bool) -> list[float]:
        random.setstate(snapshot)
        if reseed:
            reseed_random()
        return [policy.backoff(retry) for retry in (1, 2, 3)]

    assert restored_copy_draws(reseed=False) == restored_copy_draws(reseed=False)  # the lockstep
    assert restored_copy_draws(reseed=True) != restored_copy_draws(reseed=True)
